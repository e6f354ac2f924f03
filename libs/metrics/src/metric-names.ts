/**
 * The single table of metric names, kinds and label names. {@link GatewayMetrics} builds its
 * handles from it and the ops tests check dashboards and alert rules against it, so a renamed
 * metric breaks a test instead of silently emptying a Grafana panel.
 */
export interface MetricDefinition {
  readonly name: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  readonly help: string;
  readonly labelNames: readonly string[];
}

/** Every gateway-specific metric a process may export (defaults such as `process_*` excluded). */
export const METRIC_DEFINITIONS = [
  def('mcp_tasks_submitted_total', 'counter', 'Tasks accepted by the API', ['toolset']),
  def('mcp_tasks_http_request_duration_seconds', 'histogram', 'API request duration', [
    'route',
    'method',
    'status',
  ]),
  def(
    'mcp_tasks_claims_total',
    'counter',
    'Claim statements that claimed rows, per phase claimed',
    ['phase'],
  ),
  def('mcp_tasks_claimed_rows_total', 'counter', 'Rows returned by claim statements', ['phase']),
  def('mcp_tasks_claim_duration_seconds', 'histogram', 'Duration of one claim statement', []),
  def('mcp_tasks_attempts_total', 'counter', 'Attempts on claimed rows, by outcome', [
    'phase',
    'toolset',
    'outcome',
  ]),
  def('mcp_tasks_upstream_call_duration_seconds', 'histogram', 'Upstream MCP request duration', [
    'server',
    'operation',
  ]),
  def('mcp_tasks_transitions_total', 'counter', 'Task status transitions', ['toolset', 'to']),
  def('mcp_tasks_lease_lost_total', 'counter', 'Fenced writes that found the lease gone', [
    'phase',
  ]),
  def('mcp_tasks_rescued_total', 'counter', 'Claims of rows whose previous lease expired', [
    'phase',
  ]),
  def('mcp_tasks_backlog', 'gauge', 'Due, unclaimed rows (sampled from the database)', ['phase']),
  def('mcp_tasks_oldest_due_age_seconds', 'gauge', 'Age of the oldest due row (sampled)', [
    'phase',
  ]),
  def('mcp_tasks_due_lag_seconds', 'histogram', 'Claim time minus due time', []),
  def('mcp_tasks_inflight', 'gauge', 'Upstream calls in flight on this worker', ['server']),
  def('mcp_tasks_worker_slots_free', 'gauge', 'Free worker slots on this worker', []),
  def('mcp_tasks_upstream_state', 'gauge', '1 for the current supervisor state, else 0', [
    'server',
    'state',
  ]),
  def('mcp_tasks_upstream_reconnects_total', 'counter', 'Upstream reconnect attempts', [
    'server',
    'reason',
  ]),
  def(
    'mcp_tasks_push_wakes_total',
    'counter',
    'Task changes an upstream pushed that woke a task this worker polls',
    ['server'],
  ),
  def(
    'mcp_tasks_push_lost_total',
    'counter',
    'Push subscriptions lost; their tasks went back to the normal poll interval',
    ['server'],
  ),
  def('mcp_tasks_webhook_deliveries_total', 'counter', 'Webhook delivery attempts', ['outcome']),
  def('mcp_tasks_webhook_delivery_duration_seconds', 'histogram', 'Webhook request duration', []),
  def('mcp_tasks_workers_alive', 'gauge', 'Pollers with a fresh heartbeat (sampled)', []),
  def('mcp_tasks_webhook_dead_letters_total', 'counter', 'Deliveries that gave up for good', []),
  def('mcp_tasks_submit_refusals_total', 'counter', 'Submits the API refused, by reason', [
    'reason',
  ]),
  def(
    'mcp_tasks_database_up',
    'gauge',
    '1 when the last database ping answered in time and the database took writes, else 0',
    [],
  ),
] as const satisfies readonly MetricDefinition[];

/** Union of all gateway metric names. */
export type MetricName = (typeof METRIC_DEFINITIONS)[number]['name'];

/** All gateway metric names, in definition order. */
export const METRIC_NAMES: readonly MetricName[] = METRIC_DEFINITIONS.map((d) => d.name);

function def<N extends string, T extends MetricDefinition['type'], L extends readonly string[]>(
  name: N,
  type: T,
  help: string,
  labelNames: L,
): { readonly name: N; readonly type: T; readonly help: string; readonly labelNames: L } {
  return { name, type, help, labelNames };
}
