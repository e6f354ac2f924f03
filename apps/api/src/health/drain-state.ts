import { Injectable } from '@nestjs/common';

/**
 * Whether this replica is shutting down. Set on SIGTERM, before the shutdown delay: readiness
 * answers 503 from then on while every other route keeps serving (docs/operations.md, "Grace
 * periods").
 */
@Injectable()
export class DrainState {
  private started = false;

  get draining(): boolean {
    return this.started;
  }

  start(): void {
    this.started = true;
  }
}
