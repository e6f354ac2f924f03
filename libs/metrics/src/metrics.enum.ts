/**
 * Closed label value sets for the gateway's metrics. Keeping them here (one enum file per library)
 * means a dashboard or alert can rely on a value existing, and a typo in a caller is a type error
 * rather than a new, silently empty time series.
 */

/** Why a claim was taken: submit, poll, cancel, or deliver (an outbound event). */
export const PHASES = ['submit', 'poll', 'cancel', 'deliver'] as const;
/** One of {@link PHASES}. */
export type Phase = (typeof PHASES)[number];

/** Every attempt ends in exactly one of these, so failures are counted, not only successes. */
export const ATTEMPT_OUTCOMES = [
  'ok',
  'transient_error',
  'permanent_error',
  'lease_lost',
  'aborted',
] as const;
/** One of {@link ATTEMPT_OUTCOMES}. */
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

/** Supervisor states of one upstream server connection (see connections.md). */
export const UPSTREAM_STATES = ['connecting', 'ready', 'degraded', 'parked', 'closed'] as const;
/** One of {@link UPSTREAM_STATES}. */
export type UpstreamState = (typeof UPSTREAM_STATES)[number];

/**
 * Outcome of one webhook delivery attempt. `dead_letter` is the last failed attempt of a delivery
 * (also counted by `mcp_tasks_webhook_dead_letters_total`); `disabled` is a 410 from the receiver;
 * `lease_lost` an attempt whose fenced write found another claim; `unrecorded` one whose write
 * failed (the database unreachable): sent again once its lease ends, whatever the receiver said.
 */
export const WEBHOOK_OUTCOMES = [
  'ok',
  'transient_error',
  'permanent_error',
  'dead_letter',
  'disabled',
  'lease_lost',
  'unrecorded',
] as const;
/** One of {@link WEBHOOK_OUTCOMES}. */
export type WebhookOutcome = (typeof WEBHOOK_OUTCOMES)[number];

/**
 * Why the API refused a submit (`mcp_tasks_submit_refusals_total{reason}`): a client sending
 * bad requests shows as `invalid_*`, a caller over a quota as `rate_limited` (submits per
 * minute) or `active_tasks_limited` (tasks active at once).
 */
export const SUBMIT_REFUSAL_REASONS = [
  'rate_limited',
  'active_tasks_limited',
  'invalid_request',
  'unknown_toolset',
  'invalid_arguments',
  'idempotency_conflict',
] as const;
/** One of {@link SUBMIT_REFUSAL_REASONS}. */
export type SubmitRefusalReason = (typeof SUBMIT_REFUSAL_REASONS)[number];
