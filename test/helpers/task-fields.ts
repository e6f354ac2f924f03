// The fields a consumer sees on a task (docs/api.md, "Behaviour worth knowing": the task), pinned
// once for the tests that check what the API answers and what its OpenAPI document declares.

/** The summary that lists show. */
export const TASK_SUMMARY_FIELDS = [
  'task_id',
  'thread_id',
  'toolset',
  'status',
  'created_at',
  'updated_at',
  'submitted_at',
  'completed_at',
  'next_check_at',
  'cancel_requested',
  'tracking_degraded',
  'progress',
  'error',
  'last_error',
  'metadata',
].sort();

/** What only `GET …/tasks/{id}` adds to the summary. */
export const TASK_DETAIL_ONLY_FIELDS = [
  'result',
  'result_preview',
  'result_truncated',
  'result_artifact',
  'input_required',
  'retry_of',
];

/** One task in detail. */
export const TASK_DETAIL_FIELDS = [...TASK_SUMMARY_FIELDS, ...TASK_DETAIL_ONLY_FIELDS].sort();
