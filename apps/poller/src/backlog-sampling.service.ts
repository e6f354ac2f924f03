import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { BacklogSampler, GatewayMetrics } from '@app/metrics';
import { FleetRepository, WorkerRepository } from '@app/persistence';
import { WorkerRegistryService } from './worker-registry.service';

/** One sample per Prometheus scrape interval: gauges move no faster than they are read. */
const SAMPLE_INTERVAL_MS = 15_000;

/**
 * Feeds mcp_tasks_backlog, mcp_tasks_oldest_due_age_seconds and mcp_tasks_workers_alive from
 * one cheap query on a timer (never per scrape), through the metrics library's sampler.
 */
@Injectable()
export class BacklogSamplingService {
  private readonly sampler: BacklogSampler;

  constructor(
    fleet: FleetRepository,
    workers: WorkerRepository,
    registry: WorkerRegistryService,
    metrics: GatewayMetrics,
    log: PinoLogger,
  ) {
    this.sampler = new BacklogSampler({
      query: () => fleet.sampleBacklog(),
      countAliveWorkers: () => workers.countAlive(registry.deadAfterMs),
      metrics,
      intervalMs: SAMPLE_INTERVAL_MS,
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
