import { SubmitRefusalReason } from '@app/metrics';
import { QuotaName } from '@app/persistence';

/** The metric reason of each quota's refusals. */
export const QUOTA_REASONS: Readonly<Record<QuotaName, SubmitRefusalReason>> = {
  submits_per_minute: 'rate_limited',
  active_tasks: 'active_tasks_limited',
};

/** What a refusal on each quota tells the client. */
export const QUOTA_DETAILS: Readonly<Record<QuotaName, (limit: number) => string>> = {
  submits_per_minute: (limit) => `Too many submits: the quota is ${limit} a minute; retry later.`,
  active_tasks: (limit) =>
    `Too many active tasks: the quota is ${limit} queued or running at once; retry once some end.`,
};
