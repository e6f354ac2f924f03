import { Provider } from '@nestjs/common';
import { EventRetentionJob } from '../webhooks/event-retention.job';
import { BacklogSamplingService } from './backlog-sampling.service';
import { CatalogSweepJob } from './catalog-sweep.job';
import { DeadlineSweepJob } from './deadline-sweep.job';
import { PERIODIC_JOBS, PeriodicJob } from './periodic-job';
import { RetentionJob } from './retention.job';

/**
 * The periodic jobs and their one list. The order is the start order the lifecycle has always
 * had (the sampler first, the deadline sweep last); event retention is provided by the webhooks
 * module, which owns events, and joins the list here. A new job is added to the list, not to
 * the lifecycle's constructor.
 */
export const UPKEEP_PROVIDERS: Provider[] = [
  BacklogSamplingService,
  RetentionJob,
  CatalogSweepJob,
  DeadlineSweepJob,
  {
    provide: PERIODIC_JOBS,
    inject: [
      BacklogSamplingService,
      RetentionJob,
      EventRetentionJob,
      CatalogSweepJob,
      DeadlineSweepJob,
    ],
    useFactory: (...jobs: PeriodicJob[]): PeriodicJob[] => jobs,
  },
];
