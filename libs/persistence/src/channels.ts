/**
 * Every channel the gateway NOTIFYs and LISTENs on, in one place. The triggers of `migrations/`
 * write the same names as literals (a migration is history and keeps its text); the schema test
 * pins that the migrated schema notifies no channel missing from {@link CHANNELS}.
 */

/**
 * Due work for the pollers' claim loops: the tasks table's triggers notify it (payload: submit |
 * cancel), and so do the repositories that make rows due (release, input, replay, …).
 */
export const TASKS_DUE_CHANNEL = 'mcp_tasks_due';

/** The outbox wrote task events: the API's event streams wake (payload `["<user>", "<thread>"]`). */
export const TASK_EVENTS_CHANNEL = 'mcp_task_events';

/** The outbox created webhook deliveries: the pollers' delivery workers wake (payload empty). */
export const WEBHOOKS_DUE_CHANNEL = 'mcp_webhooks_due';

/** A key was revoked through the repository: every API replica forgets it (payload: its ID). */
export const API_KEY_REVOKED_CHANNEL = 'mcp_api_key_revoked';

/** The channel list: a LISTEN names one of these. */
export const CHANNELS = [
  TASKS_DUE_CHANNEL,
  TASK_EVENTS_CHANNEL,
  WEBHOOKS_DUE_CHANNEL,
  API_KEY_REVOKED_CHANNEL,
] as const;

export type Channel = (typeof CHANNELS)[number];
