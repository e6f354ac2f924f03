// Guards against a metric operations.md names going missing, never moving, or miscounting a real run.
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import request from 'supertest';
import { ApiProcess, bearer, createKeyWithCli } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import { WebhookReceiver } from '../events/webhook-receiver';
import { waitUntil } from '../helpers/wait';
import {
  DemoServerProcess,
  PollerProcess,
  demoServerEntry,
  writeServersFile,
} from '../helpers/processes';
import { Exposition, parseExposition, select, sum } from './exposition';

const SERVER = 'demo';
const TOOLSET = 'demo-ordinary';
const WORKER_SLOTS = 4;
const USER = `metrics-user-${process.pid}`;
const THREADS = ['metrics-thread-ok', 'metrics-thread-fail', 'metrics-thread-cancel'] as const;
const COMPLETING = 5;
const FAILING = 2;
const CANCELLED = 1;
const SUBMITTED = COMPLETING + FAILING + CANCELLED;
const TERMINAL = ['completed', 'failed', 'cancelled'];

const API_METRICS = ['mcp_tasks_submitted_total', 'mcp_tasks_http_request_duration_seconds'];
const POLLER_METRICS = [
  'mcp_tasks_claims_total',
  'mcp_tasks_claimed_rows_total',
  'mcp_tasks_claim_duration_seconds',
  'mcp_tasks_attempts_total',
  'mcp_tasks_upstream_call_duration_seconds',
  'mcp_tasks_transitions_total',
  'mcp_tasks_lease_lost_total',
  'mcp_tasks_rescued_total',
  'mcp_tasks_backlog',
  'mcp_tasks_oldest_due_age_seconds',
  'mcp_tasks_due_lag_seconds',
  'mcp_tasks_inflight',
  'mcp_tasks_worker_slots_free',
  'mcp_tasks_upstream_state',
  'mcp_tasks_upstream_reconnects_total',
  'mcp_tasks_push_wakes_total',
  'mcp_tasks_push_lost_total',
  'mcp_tasks_webhook_deliveries_total',
  'mcp_tasks_webhook_delivery_duration_seconds',
];
// A sample of prom-client's default metrics: one process_* and one nodejs_* family each.
const DEFAULT_METRICS = [
  'process_cpu_seconds_total',
  'process_resident_memory_bytes',
  'nodejs_eventloop_lag_seconds',
  'nodejs_heap_size_used_bytes',
];

const fleet = useFleet();
let api: ApiProcess;
let demo: DemoServerProcess;
let poller: PollerProcess;
let serversFile: string;
const receiver = new WebhookReceiver();
let auth: string;
const taskIds: string[] = [];
let apiScrape: Exposition;
let pollerScrape: Exposition;

beforeAll(async () => {
  // WEBHOOK_ALLOW_PRIVATE_NETWORKS: the receiver listens on 127.0.0.1.
  api = await fleet.api({ WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  demo = await fleet.demo();
  serversFile = writeServersFile({ [SERVER]: demoServerEntry(demo.url, TOOLSET) });
  poller = await fleet.poller(serversFile, {
    env: {
      WORKER_SLOTS: String(WORKER_SLOTS),
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // The backlog gauges move within a test's wait, not once per 15 s scrape interval.
      BACKLOG_SAMPLE_INTERVAL_MS: '500',
    },
  });
  auth = bearer(await createKeyWithCli(fleet.url, USER));
  await receiver.start();
  await waitUntil(
    async () => {
      const res = await request(api.url).get('/v1/toolsets').set('Authorization', auth);
      const items = (res.body as { items?: Array<{ name: string; available: boolean }> }).items;
      return items?.some((t) => t.name === TOOLSET && t.available) ? true : undefined;
    },
    `${TOOLSET} available`,
    20_000,
  );
  await runTheWorkload();
  // Probes and a refused submit: the first must not reach the request histogram, the second
  // must be counted by reason.
  for (const path of ['/healthz/live', '/healthz/ready']) {
    expect((await request(api.url).get(path)).status).toBe(200);
  }
  const refused = await request(api.url)
    .post(`/v1/threads/${THREADS[0]}/tasks`)
    .set('Authorization', auth)
    .send({ toolset: 'no-such-toolset', arguments: {} });
  expect(refused.status).toBe(422);
  [apiScrape, pollerScrape] = await settledScrapes();
  // Above the sum of the waits' own deadlines (85 s), so a slow step fails naming itself rather
  // than as the hook's timeout (a loaded suite run once failed here at 60 s, saying nothing).
}, 120_000);

// After the fleet's own afterAll: its poller, demo server and API have stopped by then.
afterAll(async () => {
  await receiver.stop();
  if (serversFile) rmSync(dirname(serversFile), { recursive: true, force: true });
});

async function submit(thread: string, args: Record<string, unknown>): Promise<string> {
  const res = await request(api.url)
    .post(`/v1/threads/${thread}/tasks`)
    .set('Authorization', auth)
    .send({ toolset: TOOLSET, arguments: args });
  expect(res.status).toBe(201);
  const id = (res.body as { task_id: string }).task_id;
  taskIds.push(id);
  return id;
}

async function statusOf(thread: string, id: string): Promise<string> {
  const res = await request(api.url)
    .get(`/v1/threads/${thread}/tasks/${id}`)
    .set('Authorization', auth);
  return (res.body as { status: string }).status;
}

/** 5 tasks that complete, 2 that fail upstream, 1 cancelled while working; all end terminal. */
async function runTheWorkload(): Promise<void> {
  const hook = await request(api.url)
    .post('/v1/webhooks')
    .set('Authorization', auth)
    .send({ url: receiver.route('/hook', 'unknown-yet') });
  expect(hook.status).toBe(201);
  receiver.route('/hook', (hook.body as { secret: string }).secret);

  const [okThread, failThread, cancelThread] = THREADS;
  const long = await submit(cancelThread, { duration_ms: 60_000 });
  for (let i = 0; i < COMPLETING; i++) await submit(okThread, { duration_ms: 200 });
  for (let i = 0; i < FAILING; i++) {
    await submit(failThread, { duration_ms: 200, outcome: 'fail', fail_message: 'as asked' });
  }
  // Cancelled once working, so the poller's cancel phase (not the API's local cancel) ends it.
  await waitUntil(
    async () => ((await statusOf(cancelThread, long)) === 'working' ? true : undefined),
    'the long task to be working',
    15_000,
  );
  const cancel = await request(api.url)
    .post(`/v1/threads/${cancelThread}/tasks/${long}/cancel`)
    .set('Authorization', auth);
  expect(cancel.status).toBe(202);

  await waitUntil(
    async () => {
      const rows = await fleet.db.query<{ n: string }>(
        `SELECT count(*) AS n FROM tasks WHERE id = ANY($1::text[]) AND status = ANY($2::text[])`,
        [taskIds, TERMINAL],
      );
      return Number(rows[0].n) === SUBMITTED ? true : undefined;
    },
    'every task terminal',
    30_000,
  );
}

/**
 * Scrapes both apps once the run has settled: every webhook delivery recorded and every slot
 * given back (a slot is released just after the terminal write, so the DB is ahead of it).
 */
async function settledScrapes(): Promise<[Exposition, Exposition]> {
  return waitUntil(
    async () => {
      const pending = await fleet.db.query<{ n: string }>(
        `SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'pending'`,
      );
      if (Number(pending[0].n) > 0) return undefined;
      const delivered = await deliveredCount();
      const apiText = await (await fetch(`${api.metricsUrl}/metrics`)).text();
      const polled = parseExposition(await poller.metrics());
      const settled =
        sum(polled, 'mcp_tasks_worker_slots_free') === WORKER_SLOTS &&
        sum(polled, 'mcp_tasks_webhook_deliveries_total') === delivered &&
        delivered > 0;
      return settled ? ([parseExposition(apiText), polled] as [Exposition, Exposition]) : undefined;
    },
    'slots free and webhook deliveries recorded',
    20_000,
  );
}

async function deliveredCount(): Promise<number> {
  const rows = await fleet.db.query<{ n: string }>(
    `SELECT count(*) AS n FROM webhook_deliveries WHERE status = 'delivered'`,
  );
  return Number(rows[0].n);
}

describe('every metric operations.md names is exported by the right app', () => {
  it.each(API_METRICS)('API exports %s', (name) => {
    expect(apiScrape.types.has(name)).toBe(true);
  });

  it.each(POLLER_METRICS)('poller exports %s', (name) => {
    expect(pollerScrape.types.has(name)).toBe(true);
  });

  it.each(DEFAULT_METRICS)('both export the default metric %s', (name) => {
    expect(select(apiScrape, name).length).toBeGreaterThan(0);
    expect(select(pollerScrape, name).length).toBeGreaterThan(0);
  });

  it('labels every series with its app', () => {
    for (const s of apiScrape.samples) expect(s.labels.app).toBe('api');
    for (const s of pollerScrape.samples) expect(s.labels.app).toBe('poller');
  });
});

describe('the API counts what it was asked', () => {
  it('counts every submitted task under its toolset', () => {
    expect(select(apiScrape, 'mcp_tasks_submitted_total').map((s) => s.labels)).toEqual([
      { app: 'api', toolset: TOOLSET },
    ]);
    expect(sum(apiScrape, 'mcp_tasks_submitted_total')).toBe(SUBMITTED);
  });

  it('times requests under their route pattern, method and status', () => {
    const count = (route: string, method: string, status: string): number =>
      sum(apiScrape, 'mcp_tasks_http_request_duration_seconds_count', { route, method, status });
    expect(count('/v1/threads/:thread_id/tasks', 'POST', '201')).toBe(SUBMITTED);
    expect(count('/v1/threads/:thread_id/tasks/:task_id/cancel', 'POST', '202')).toBe(CANCELLED);
    expect(count('/v1/webhooks', 'POST', '201')).toBe(1);
    expect(count('/v1/threads/:thread_id/tasks/:task_id', 'GET', '200')).toBeGreaterThan(0);
    const routes = select(apiScrape, 'mcp_tasks_http_request_duration_seconds_count').map(
      (s) => s.labels.route,
    );
    // Patterns only: a raw path would make one series per task.
    for (const route of routes) expect(route).toMatch(/^(unmatched|(\/(:[a-z_]+|[a-z0-9_-]+))+)$/);
    // Probes are not user traffic: they would dilute the error ratio and latency percentiles.
    expect(routes.filter((r) => r.startsWith('/healthz') || r === '/metrics')).toEqual([]);
  });

  it('counts refused submits by reason, every known reason exported from start-up', () => {
    const refusals = select(apiScrape, 'mcp_tasks_submit_refusals_total');
    expect(refusals.map((s) => s.labels.reason).sort()).toEqual([
      'active_tasks_limited',
      'idempotency_conflict',
      'invalid_arguments',
      'invalid_request',
      'rate_limited',
      'unknown_toolset',
    ]);
    expect(sum(apiScrape, 'mcp_tasks_submit_refusals_total', { reason: 'unknown_toolset' })).toBe(
      1,
    );
    expect(sum(apiScrape, 'mcp_tasks_submit_refusals_total')).toBe(1);
  });

  it('reports the database reachable from both apps', () => {
    expect(sum(apiScrape, 'mcp_tasks_database_up')).toBe(1);
    expect(sum(pollerScrape, 'mcp_tasks_database_up')).toBe(1);
  });

  it('does not run the poller-side counters', () => {
    expect(sum(apiScrape, 'mcp_tasks_claims_total')).toBe(0);
    expect(sum(apiScrape, 'mcp_tasks_attempts_total')).toBe(0);
    // Only the API's local cancel (of a task never submitted) counts a transition here.
    expect(sum(apiScrape, 'mcp_tasks_transitions_total')).toBe(0);
  });
});

describe('the poller counts what it did', () => {
  it('counts every transition by its target status', () => {
    const to = (status: string): number =>
      sum(pollerScrape, 'mcp_tasks_transitions_total', { toolset: TOOLSET, to: status });
    expect(to('working')).toBe(SUBMITTED);
    expect(to('completed')).toBe(COMPLETING);
    expect(to('failed')).toBe(FAILING);
    expect(to('cancelled')).toBe(CANCELLED);
    expect(sum(pollerScrape, 'mcp_tasks_transitions_total')).toBe(
      SUBMITTED + COMPLETING + FAILING + CANCELLED,
    );
  });

  it('counts attempts by outcome, failures included', () => {
    const outcome = (o: string): number =>
      sum(pollerScrape, 'mcp_tasks_attempts_total', { toolset: TOOLSET, outcome: o });
    expect(outcome('ok')).toBeGreaterThanOrEqual(SUBMITTED);
    expect(sum(pollerScrape, 'mcp_tasks_attempts_total', { phase: 'submit' })).toBe(SUBMITTED);
    expect(sum(pollerScrape, 'mcp_tasks_attempts_total', { phase: 'cancel' })).toBe(CANCELLED);
    // An upstream "failed" is an answer, not an error: a healthy run has no error outcomes.
    for (const o of ['transient_error', 'permanent_error', 'lease_lost', 'aborted'])
      expect({ o, n: outcome(o) }).toEqual({ o, n: 0 });
  });

  it('claims: every claimed row was attempted, timed and its due lag observed', () => {
    // Task rows only: webhook deliveries are claimed rows too (phase "deliver"), not attempts.
    const rows = ['submit', 'poll', 'cancel']
      .map((phase) => sum(pollerScrape, 'mcp_tasks_claimed_rows_total', { phase }))
      .reduce((a, b) => a + b, 0);
    expect(rows).toBeGreaterThanOrEqual(SUBMITTED);
    expect(rows).toBe(sum(pollerScrape, 'mcp_tasks_attempts_total'));
    expect(sum(pollerScrape, 'mcp_tasks_due_lag_seconds_count')).toBe(rows);
    // Every task claim statement is timed, including those that claimed nothing.
    const statements = sum(pollerScrape, 'mcp_tasks_claims_total', { phase: 'submit' });
    expect(statements).toBeGreaterThan(0);
    expect(sum(pollerScrape, 'mcp_tasks_claim_duration_seconds_count')).toBeGreaterThanOrEqual(
      statements,
    );
    expect(sum(pollerScrape, 'mcp_tasks_rescued_total')).toBe(0);
    expect(sum(pollerScrape, 'mcp_tasks_lease_lost_total')).toBe(0);
    // Exported at 0 from start-up, so rate() sees the first loss.
    expect(select(pollerScrape, 'mcp_tasks_lease_lost_total').map((s) => s.labels.phase)).toEqual([
      'submit',
      'poll',
      'cancel',
      'deliver',
    ]);
    // Per configured server too: its ordinary tasks are never pushed.
    for (const name of ['mcp_tasks_push_wakes_total', 'mcp_tasks_push_lost_total']) {
      expect(select(pollerScrape, name).map((s) => [s.labels.server, s.value])).toEqual([
        [SERVER, 0],
      ]);
    }
  });

  it('times upstream calls per server and operation', () => {
    const calls = select(pollerScrape, 'mcp_tasks_upstream_call_duration_seconds_count');
    expect(calls.length).toBeGreaterThan(0);
    for (const s of calls) expect(s.labels.server).toBe(SERVER);
    expect(sum(pollerScrape, 'mcp_tasks_upstream_call_duration_seconds_count')).toBeGreaterThan(
      SUBMITTED,
    );
  });

  it('shows the demo server ready and every worker slot free', () => {
    const state = (s: string): number =>
      sum(pollerScrape, 'mcp_tasks_upstream_state', { server: SERVER, state: s });
    expect(state('ready')).toBe(1);
    expect(sum(pollerScrape, 'mcp_tasks_upstream_state', { server: SERVER })).toBe(1);
    expect(sum(pollerScrape, 'mcp_tasks_worker_slots_free')).toBe(WORKER_SLOTS);
    expect(sum(pollerScrape, 'mcp_tasks_inflight', { server: SERVER })).toBe(0);
  });

  it('samples backlog gauges for every phase', () => {
    for (const phase of ['submit', 'poll', 'cancel', 'deliver']) {
      const backlog = select(pollerScrape, 'mcp_tasks_backlog', { phase });
      const age = select(pollerScrape, 'mcp_tasks_oldest_due_age_seconds', { phase });
      expect(backlog).toHaveLength(1);
      expect(age).toHaveLength(1);
      // A count of rows (an integer, at most what was submitted) and an age that is never
      // negative: a due time read against another clock than the database's would be.
      expect(Number.isInteger(backlog[0].value)).toBe(true);
      expect(backlog[0].value).toBeLessThanOrEqual(SUBMITTED);
      expect(age[0].value).toBeGreaterThanOrEqual(0);
    }
  });

  it('counts webhook deliveries as the database recorded them', async () => {
    const delivered = await deliveredCount();
    expect(sum(pollerScrape, 'mcp_tasks_webhook_deliveries_total', { outcome: 'ok' })).toBe(
      delivered,
    );
    expect(sum(pollerScrape, 'mcp_tasks_webhook_delivery_duration_seconds_count')).toBe(delivered);
    expect(receiver.at('/hook').every((r) => r.verified)).toBe(true);
  });
});

describe('labels stay low-cardinality', () => {
  it('no label value carries a task, user or thread ID', () => {
    const forbidden = [...taskIds, USER, ...THREADS];
    for (const scrape of [apiScrape, pollerScrape]) {
      for (const s of scrape.samples) {
        for (const value of Object.values(s.labels)) {
          const leaked = forbidden.filter((id) => value.includes(id));
          expect({ series: s.name, value, leaked }).toEqual({ series: s.name, value, leaked: [] });
        }
      }
    }
  });
});

describe('the API counts the cancels it makes itself', () => {
  it('counts a local cancel and a thread delete of tasks never submitted', async () => {
    // A paused poller claims nothing, so both tasks are still queued when cancelled; the API
    // then ends them in SQL and no poller ever counts them.
    poller.pause();
    try {
      const thread = 'metrics-thread-local';
      const first = await submit(thread, { duration_ms: 200 });
      await submit(thread, { duration_ms: 200 });
      const cancel = await request(api.url)
        .post(`/v1/threads/${thread}/tasks/${first}/cancel`)
        .set('Authorization', auth);
      expect((cancel.body as { status: string }).status).toBe('cancelled');
      const deleted = await request(api.url)
        .delete(`/v1/threads/${thread}`)
        .set('Authorization', auth);
      expect(deleted.status).toBe(204);
      const scrape = parseExposition(await (await fetch(`${api.metricsUrl}/metrics`)).text());
      expect(
        sum(scrape, 'mcp_tasks_transitions_total', { toolset: TOOLSET, to: 'cancelled' }),
      ).toBe(2);
      expect(sum(scrape, 'mcp_tasks_transitions_total')).toBe(2);
      expect(sum(scrape, 'mcp_tasks_submitted_total')).toBe(SUBMITTED + 2);
    } finally {
      poller.resume();
    }
  });
});

describe('a dead webhook receiver shows in the deliver backlog', () => {
  it('counts pending deliveries and ages them from the event', async () => {
    const dead = new WebhookReceiver();
    await dead.start();
    const url = dead.route('/gone', 'unused');
    await dead.stop(); // nothing listens there any more: every attempt fails and is retried
    const hook = await request(api.url)
      .post('/v1/webhooks')
      .set('Authorization', auth)
      .send({ url });
    expect(hook.status).toBe(201);
    await submit('metrics-thread-dead-hook', { duration_ms: 50 });
    // The gauge is a sample (every 500 ms here) and deliveries keep moving (each of the task's
    // events adds one; other hooks' deliveries end), so it is compared with the table, read right
    // after each scrape, until the two agree: a gauge that counted anything else never would, and
    // the wait fails the test.
    await waitUntil(
      async () => {
        const polled = parseExposition(await poller.metrics());
        const backlog = sum(polled, 'mcp_tasks_backlog', { phase: 'deliver' });
        const age = sum(polled, 'mcp_tasks_oldest_due_age_seconds', { phase: 'deliver' });
        const [{ n }] = await fleet.db.query<{ n: string }>(
          `SELECT count(*) AS n FROM webhook_deliveries WHERE next_attempt_at IS NOT NULL`,
        );
        return backlog >= 1 && age > 0 && backlog === Number(n) ? true : undefined;
      },
      'the deliver backlog gauge to equal the pending deliveries in the table',
      40_000,
    );
  }, 60_000);
});

describe('the poller counts claims by what they claimed', () => {
  it('counts a statement once per phase it claimed rows for, webhook claims under deliver', () => {
    const claims = (phase: string): number =>
      sum(pollerScrape, 'mcp_tasks_claims_total', { phase });
    const rows = (phase: string): number =>
      sum(pollerScrape, 'mcp_tasks_claimed_rows_total', { phase });
    for (const phase of ['submit', 'poll', 'cancel', 'deliver']) {
      expect(claims(phase)).toBeGreaterThan(0);
      // A statement counts for a phase only if it claimed at least one row of it.
      expect(claims(phase)).toBeLessThanOrEqual(rows(phase));
    }
  });
});
