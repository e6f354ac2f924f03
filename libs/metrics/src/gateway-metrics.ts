import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { METRIC_DEFINITIONS, MetricName } from './metric-names';
import {
  ATTEMPT_OUTCOMES,
  PHASES,
  SUBMIT_REFUSAL_REASONS,
  UPSTREAM_STATES,
  UpstreamState,
  WEBHOOK_OUTCOMES,
} from './metrics.enum';

type Definition = (typeof METRIC_DEFINITIONS)[number];
type LabelsOf<N extends MetricName> = Extract<Definition, { name: N }>['labelNames'][number];

// Buckets in seconds, chosen per metric so that the targets in docs/benchmarks.md fall inside the
// resolved range: API p99 < 50 ms, due lag p99 < 1 s, claims in single-digit milliseconds.
const API_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const CLAIM_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const DUE_LAG_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300];
// Upstream calls include sync-call tools that run for hours; the long tail stops at one hour.
const UPSTREAM_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600];
const WEBHOOK_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// Statuses a task can move to (`queued` is only ever the first).
const TRANSITION_TARGETS = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

/**
 * Typed handles to every gateway metric, registered on one registry. Both apps construct the
 * whole set (through {@link MetricsService}) so a dashboard never sees a metric missing only
 * because one process has not touched it yet; series appear when labels are first used.
 */
export class GatewayMetrics {
  readonly submitted: Counter<LabelsOf<'mcp_tasks_submitted_total'>>;
  readonly httpRequestDuration: Histogram<LabelsOf<'mcp_tasks_http_request_duration_seconds'>>;
  readonly claims: Counter<LabelsOf<'mcp_tasks_claims_total'>>;
  readonly claimedRows: Counter<LabelsOf<'mcp_tasks_claimed_rows_total'>>;
  readonly claimDuration: Histogram<LabelsOf<'mcp_tasks_claim_duration_seconds'>>;
  readonly attempts: Counter<LabelsOf<'mcp_tasks_attempts_total'>>;
  readonly upstreamCallDuration: Histogram<LabelsOf<'mcp_tasks_upstream_call_duration_seconds'>>;
  readonly transitions: Counter<LabelsOf<'mcp_tasks_transitions_total'>>;
  readonly leaseLost: Counter<LabelsOf<'mcp_tasks_lease_lost_total'>>;
  readonly rescued: Counter<LabelsOf<'mcp_tasks_rescued_total'>>;
  readonly backlog: Gauge<LabelsOf<'mcp_tasks_backlog'>>;
  readonly oldestDueAge: Gauge<LabelsOf<'mcp_tasks_oldest_due_age_seconds'>>;
  readonly dueLag: Histogram<LabelsOf<'mcp_tasks_due_lag_seconds'>>;
  readonly inflight: Gauge<LabelsOf<'mcp_tasks_inflight'>>;
  readonly workerSlotsFree: Gauge<LabelsOf<'mcp_tasks_worker_slots_free'>>;
  readonly upstreamState: Gauge<LabelsOf<'mcp_tasks_upstream_state'>>;
  readonly upstreamReconnects: Counter<LabelsOf<'mcp_tasks_upstream_reconnects_total'>>;
  readonly pushWakes: Counter<LabelsOf<'mcp_tasks_push_wakes_total'>>;
  readonly pushLost: Counter<LabelsOf<'mcp_tasks_push_lost_total'>>;
  readonly webhookDeliveries: Counter<LabelsOf<'mcp_tasks_webhook_deliveries_total'>>;
  readonly webhookDeliveryDuration: Histogram<
    LabelsOf<'mcp_tasks_webhook_delivery_duration_seconds'>
  >;
  readonly workersAlive: Gauge<LabelsOf<'mcp_tasks_workers_alive'>>;
  readonly webhookDeadLetters: Counter<LabelsOf<'mcp_tasks_webhook_dead_letters_total'>>;
  readonly submitRefusals: Counter<LabelsOf<'mcp_tasks_submit_refusals_total'>>;
  readonly databaseUp: Gauge<LabelsOf<'mcp_tasks_database_up'>>;

  /** @param registry the process's one registry; every handle registers on it. */
  constructor(readonly registry: Registry) {
    this.submitted = this.counter('mcp_tasks_submitted_total');
    this.httpRequestDuration = this.histogram(
      'mcp_tasks_http_request_duration_seconds',
      API_BUCKETS,
    );
    this.claims = this.counter('mcp_tasks_claims_total');
    this.claimedRows = this.counter('mcp_tasks_claimed_rows_total');
    this.claimDuration = this.histogram('mcp_tasks_claim_duration_seconds', CLAIM_BUCKETS);
    this.attempts = this.counter('mcp_tasks_attempts_total');
    this.upstreamCallDuration = this.histogram(
      'mcp_tasks_upstream_call_duration_seconds',
      UPSTREAM_BUCKETS,
    );
    this.transitions = this.counter('mcp_tasks_transitions_total');
    this.leaseLost = this.counter('mcp_tasks_lease_lost_total');
    this.rescued = this.counter('mcp_tasks_rescued_total');
    this.backlog = this.gauge('mcp_tasks_backlog');
    this.oldestDueAge = this.gauge('mcp_tasks_oldest_due_age_seconds');
    this.dueLag = this.histogram('mcp_tasks_due_lag_seconds', DUE_LAG_BUCKETS);
    this.inflight = this.gauge('mcp_tasks_inflight');
    this.workerSlotsFree = this.gauge('mcp_tasks_worker_slots_free');
    this.upstreamState = this.gauge('mcp_tasks_upstream_state');
    this.upstreamReconnects = this.counter('mcp_tasks_upstream_reconnects_total');
    this.pushWakes = this.counter('mcp_tasks_push_wakes_total');
    this.pushLost = this.counter('mcp_tasks_push_lost_total');
    this.webhookDeliveries = this.counter('mcp_tasks_webhook_deliveries_total');
    this.webhookDeliveryDuration = this.histogram(
      'mcp_tasks_webhook_delivery_duration_seconds',
      WEBHOOK_BUCKETS,
    );
    this.workersAlive = this.gauge('mcp_tasks_workers_alive');
    this.webhookDeadLetters = this.counter('mcp_tasks_webhook_dead_letters_total');
    this.submitRefusals = this.counter('mcp_tasks_submit_refusals_total');
    this.databaseUp = this.gauge('mcp_tasks_database_up');
  }

  /**
   * Exports the API's labelled counters at 0 for every known label value, so `rate()` sees the
   * first refusal and an alert on a missing series does not fire on a healthy, idle API.
   */
  primeApiSeries(): void {
    for (const reason of SUBMIT_REFUSAL_REASONS) this.submitRefusals.inc({ reason }, 0);
  }

  /**
   * Exports the poller's labelled counters at 0 for every known label value (phases, outcomes,
   * and the configured toolsets), so `rate()` and `increase()` see the first lease loss or dead
   * letter instead of a series that starts at 1 and reads as no increase.
   *
   * @param toolsets the toolset names of this poller's mcpServers file.
   * @param servers its server names (push wakes and losses per server).
   */
  primePollerSeries(toolsets: readonly string[], servers: readonly string[]): void {
    for (const phase of PHASES) {
      this.claimedRows.inc({ phase }, 0);
      this.leaseLost.inc({ phase }, 0);
      this.rescued.inc({ phase }, 0);
    }
    for (const outcome of WEBHOOK_OUTCOMES) this.webhookDeliveries.inc({ outcome }, 0);
    for (const server of servers) {
      this.pushWakes.inc({ server }, 0);
      this.pushLost.inc({ server }, 0);
    }
    for (const toolset of toolsets) {
      for (const to of TRANSITION_TARGETS) this.transitions.inc({ toolset, to }, 0);
      for (const outcome of ATTEMPT_OUTCOMES) {
        for (const phase of PHASES) {
          if (phase !== 'deliver') this.attempts.inc({ phase, toolset, outcome }, 0);
        }
      }
    }
  }

  /**
   * Marks `state` as the server's current supervisor state: 1 for it, 0 for every other state,
   * so `mcp_tasks_upstream_state{state="parked"} == 1` selects exactly the parked servers.
   */
  setUpstreamState(server: string, state: UpstreamState): void {
    for (const s of UPSTREAM_STATES)
      this.upstreamState.set({ server, state: s }, s === state ? 1 : 0);
  }

  private counter<N extends MetricName>(name: N): Counter<LabelsOf<N>> {
    const d = definition(name);
    return new Counter({ ...base(d), registers: [this.registry] });
  }

  private gauge<N extends MetricName>(name: N): Gauge<LabelsOf<N>> {
    const d = definition(name);
    return new Gauge({ ...base(d), registers: [this.registry] });
  }

  private histogram<N extends MetricName>(name: N, buckets: number[]): Histogram<LabelsOf<N>> {
    const d = definition(name);
    return new Histogram({ ...base(d), buckets, registers: [this.registry] });
  }
}

function definition(name: MetricName): Definition {
  const d = METRIC_DEFINITIONS.find((m) => m.name === name);
  if (!d) throw new Error(`metric ${name} has no definition`);
  return d;
}

function base<T extends string>(d: Definition): { name: string; help: string; labelNames: T[] } {
  return { name: d.name, help: d.help, labelNames: [...d.labelNames] as T[] };
}
