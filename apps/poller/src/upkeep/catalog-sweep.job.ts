import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { Settings, SETTINGS } from '@app/config';
import { PeriodicRun } from '@app/lifecycle';
import { CatalogRepository } from '@app/persistence';
import { WORKER_ID } from '../poller.tokens';
import { PeriodicJob } from './periodic-job';

/** Queued tasks of removed toolsets ended per statement; the next tick takes the rest. */
export const REMOVED_TOOLSET_BATCH_ROWS = 500;

/**
 * Keeps the catalog truthful about toolsets no live poller has configured (docs/operations.md,
 * "Removed toolsets"): once per heartbeat interval it marks them removed (unavailable, and new
 * submits get 422), clears the mark when a live poller lists them again, and ends their queued
 * tasks `toolset_removed` once REMOVED_TOOLSET_GRACE_MS has passed. Every poller runs it; the
 * statements are idempotent and skip locked rows, so running it twice at once is harmless.
 */
@Injectable()
export class CatalogSweepJob implements PeriodicJob {
  readonly name = 'catalog-sweep';
  private readonly run: PeriodicRun;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    @Inject(WORKER_ID) private readonly workerId: string,
    private readonly catalog: CatalogRepository,
    private readonly log: PinoLogger,
  ) {
    this.run = new PeriodicRun(
      () =>
        this.sweep().catch((error: unknown) =>
          this.log.warn({ err: error }, 'catalog sweep failed'),
        ),
      settings.worker.heartbeatIntervalMs,
    );
  }

  /** Starts sweeping; call once the worker is registered (an unregistered sweeper changes nothing). */
  start(): void {
    this.run.start();
  }

  async stop(): Promise<void> {
    await this.run.stop();
  }

  private async sweep(): Promise<void> {
    // A poller is live by the dead-after window the claim judges pinned rows by (the registry's).
    const deadAfterMs = this.settings.worker.deadAfterMs;
    for (const change of await this.catalog.sweepRemoved(this.workerId, deadAfterMs)) {
      if (change.removed) {
        this.log.warn({ toolset: change.name }, 'toolset configured on no live worker: removed');
      } else {
        this.log.info({ toolset: change.name }, 'toolset configured again');
      }
    }
    const ended = await this.catalog.failQueuedOfRemoved(
      this.settings.scheduling.removedToolsetGraceMs,
      REMOVED_TOOLSET_BATCH_ROWS,
    );
    if (ended.length > 0) {
      this.log.warn({ tasks: ended.length }, 'queued tasks of removed toolsets ended');
    }
  }
}
