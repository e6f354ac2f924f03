import { Inject, Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { SETTINGS, Settings } from '@app/config';
import { BacklogSampler, GatewayMetrics } from '@app/metrics';
import { FleetRepository, WorkerRepository } from '@app/persistence';
import { PeriodicJob } from './periodic-job';
import { WorkerRegistryService } from './worker-registry.service';

/**
 * Feeds mcp_tasks_backlog, mcp_tasks_oldest_due_age_seconds and mcp_tasks_workers_alive from
 * one cheap query on a timer (never per scrape), through the metrics library's sampler; the
 * timer is BACKLOG_SAMPLE_INTERVAL_MS (15 s, one Prometheus scrape interval: the gauges move no
 * faster than they are read).
 */
@Injectable()
export class BacklogSamplingService implements PeriodicJob {
  readonly name = 'backlog-sampling';
  private readonly sampler: BacklogSampler;

  constructor(
    fleet: FleetRepository,
    workers: WorkerRepository,
    registry: WorkerRegistryService,
    metrics: GatewayMetrics,
    log: PinoLogger,
    @Inject(SETTINGS) settings: Settings,
  ) {
    this.sampler = new BacklogSampler({
      query: () => fleet.sampleBacklog(),
      countAliveWorkers: () => workers.countAlive(registry.deadAfterMs),
      metrics,
      intervalMs: settings.worker.backlogSampleIntervalMs,
      onError: (error) => log.warn({ err: error }, 'backlog sample failed'),
    });
  }

  start(): void {
    this.sampler.start();
  }

  stop(): Promise<void> {
    return this.sampler.stop();
  }
}
