import { Injectable, OnModuleDestroy } from '@nestjs/common';

/**
 * The requests this replica is holding open while a task moves (a `Prefer: wait` submit, an MCP
 * call answered inline, `tasks/result`, a round's wait). When the app closes every hold ends at
 * once and answers what it has, so no hold keeps the process, or its client, waiting past the
 * shutdown delay (docs/operations.md, "Grace periods"). Ending a hold this way is not the
 * client's cancel: the task goes on.
 */
@Injectable()
export class HeldRequests implements OnModuleDestroy {
  /** One per hold in progress. */
  private readonly holds = new Set<AbortController>();
  private closed = false;

  /** True once the app is closing: a hold that ends now ended for that reason, or its client's. */
  get closing(): boolean {
    return this.closed;
  }

  /**
   * Runs `wait` with a signal that fires when `abort` (the caller went away) does or when the app
   * closes; a hold that starts while the app is closing gets a fired signal.
   */
  async hold<T>(
    abort: AbortSignal | undefined,
    wait: (stop: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const hold = new AbortController();
    const onAbort = (): void => hold.abort();
    abort?.addEventListener('abort', onAbort, { once: true });
    this.holds.add(hold);
    if (this.closed || abort?.aborted) hold.abort();
    try {
      return await wait(hold.signal);
    } finally {
      this.holds.delete(hold);
      abort?.removeEventListener('abort', onAbort);
    }
  }

  onModuleDestroy(): void {
    this.closed = true;
    for (const hold of this.holds) hold.abort();
  }
}
