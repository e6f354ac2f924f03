// Guards against metric names or labels drifting from operations.md, and a metrics endpoint that does not answer.
import { Registry } from 'prom-client';
import {
  BacklogSampler,
  DatabaseProbe,
  GatewayMetrics,
  METRIC_NAMES,
  MetricsServer,
  MetricsService,
  startMetricsServer,
} from '@app/metrics';

// Written out here, not derived from METRIC_DEFINITIONS, so a change there has to change this too.
const EXPECTED: Record<string, [string, string[]]> = {
  mcp_tasks_submitted_total: ['counter', ['toolset']],
  mcp_tasks_http_request_duration_seconds: ['histogram', ['route', 'method', 'status']],
  mcp_tasks_claims_total: ['counter', ['phase']],
  mcp_tasks_claimed_rows_total: ['counter', ['phase']],
  mcp_tasks_claim_duration_seconds: ['histogram', []],
  mcp_tasks_attempts_total: ['counter', ['phase', 'toolset', 'outcome']],
  mcp_tasks_upstream_call_duration_seconds: ['histogram', ['server', 'operation']],
  mcp_tasks_transitions_total: ['counter', ['toolset', 'to']],
  mcp_tasks_lease_lost_total: ['counter', ['phase']],
  mcp_tasks_rescued_total: ['counter', ['phase']],
  mcp_tasks_backlog: ['gauge', ['phase']],
  mcp_tasks_oldest_due_age_seconds: ['gauge', ['phase']],
  mcp_tasks_due_lag_seconds: ['histogram', []],
  mcp_tasks_inflight: ['gauge', ['server']],
  mcp_tasks_worker_slots_free: ['gauge', []],
  mcp_tasks_upstream_state: ['gauge', ['server', 'state']],
  mcp_tasks_upstream_reconnects_total: ['counter', ['server', 'reason']],
  mcp_tasks_push_wakes_total: ['counter', ['server']],
  mcp_tasks_push_lost_total: ['counter', ['server']],
  mcp_tasks_webhook_deliveries_total: ['counter', ['outcome']],
  mcp_tasks_webhook_delivery_duration_seconds: ['histogram', []],
  mcp_tasks_workers_alive: ['gauge', []],
  mcp_tasks_webhook_dead_letters_total: ['counter', []],
  mcp_tasks_submit_refusals_total: ['counter', ['reason']],
  mcp_tasks_database_up: ['gauge', []],
};

describe('MetricsService registry', () => {
  const service = new MetricsService();
  const json = async () => service.registry.getMetricsAsJSON();

  it('lists exactly the expected names in METRIC_NAMES', () => {
    expect([...METRIC_NAMES].sort()).toEqual(Object.keys(EXPECTED).sort());
  });

  it.each(Object.entries(EXPECTED))(
    'registers %s with its type and labels',
    async (name, [type, labels]) => {
      const metric = service.registry.getSingleMetric(name) as unknown as { labelNames: string[] };
      expect(metric).toBeDefined();
      expect(metric.labelNames).toEqual(labels);
      expect((await json()).find((m) => m.name === name)?.type).toBe(type);
    },
  );

  it('includes process and Node.js default metrics', async () => {
    const names = (await json()).map((m) => m.name);
    expect(names).toEqual(
      expect.arrayContaining(['process_cpu_seconds_total', 'nodejs_eventloop_lag_seconds']),
    );
  });

  it('renders labelled samples in the exposition format', async () => {
    const m = service.metrics;
    m.attempts.inc({ phase: 'poll', toolset: 'demo-ordinary', outcome: 'lease_lost' });
    m.setUpstreamState('demo', 'parked');
    m.setUpstreamState('demo', 'ready');
    const text = await service.render();
    expect(text).toContain(
      'mcp_tasks_attempts_total{phase="poll",toolset="demo-ordinary",outcome="lease_lost"} 1',
    );
    expect(text).toContain('mcp_tasks_upstream_state{server="demo",state="ready"} 1');
    expect(text).toContain('mcp_tasks_upstream_state{server="demo",state="parked"} 0');
  });

  it('gives each service its own registry, so two apps in one test process do not collide', () => {
    const other = new MetricsService({ defaultMetrics: false });
    expect(other.registry).not.toBe(service.registry);
    expect(other.registry.getSingleMetric('process_cpu_seconds_total')).toBeUndefined();
    expect(other.registry.getSingleMetric('mcp_tasks_backlog')).toBeDefined();
  });
});

describe('startMetricsServer', () => {
  let server: MetricsServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('serves /metrics and health routes over a real loopback socket', async () => {
    const service = new MetricsService({ defaultMetrics: false });
    service.metrics.submitted.inc({ toolset: 'demo-sync' });
    const errors: string[] = [];
    server = await startMetricsServer(
      service.registry,
      0,
      {
        '/healthz/live': () => ({ status: 200, body: { status: 'ok' } }),
        '/healthz/ready': async () => ({ status: 503, body: { status: 'draining' } }),
        '/boom': () => {
          throw new Error('password=hunter2');
        },
      },
      { host: '127.0.0.1', onError: (_e, path) => errors.push(path) },
    );
    const url = (p: string) => `http://127.0.0.1:${server!.port}${p}`;

    const metrics = await fetch(url('/metrics'));
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(await metrics.text()).toContain('mcp_tasks_submitted_total{toolset="demo-sync"} 1');

    expect((await fetch(url('/healthz/live'))).status).toBe(200);
    const ready = await fetch(url('/healthz/ready?verbose=1'));
    expect([ready.status, await ready.json()]).toEqual([503, { status: 'draining' }]);
    expect((await fetch(url('/nope'))).status).toBe(404);
    expect((await fetch(url('/metrics'), { method: 'POST' })).status).toBe(405);
    const boom = await fetch(url('/boom'));
    expect(boom.status).toBe(500);
    expect(await boom.text()).not.toContain('hunter2');
    expect(errors).toEqual(['/boom']);
  });

  it('rejects when the port is taken', async () => {
    const registry = new Registry();
    server = await startMetricsServer(registry, 0, {}, { host: '127.0.0.1' });
    await expect(
      startMetricsServer(registry, server.port, {}, { host: '127.0.0.1' }),
    ).rejects.toThrow(/EADDRINUSE/);
  });
});

describe('BacklogSampler', () => {
  const setup = () => {
    const metrics = new GatewayMetrics(new Registry());
    const value = async (gauge: 'backlog' | 'oldestDueAge', phase: string) =>
      (await metrics[gauge].get()).values.find((v) => v.labels.phase === phase)?.value;
    return { metrics, value };
  };

  it('sets both gauges from one query, zeroing phases without rows', async () => {
    const { metrics, value } = setup();
    const sampler = new BacklogSampler({
      metrics,
      query: async () => [{ phase: 'poll', backlog: '42', oldest_due_age_seconds: '7.5' }],
      countAliveWorkers: async () => 3,
    });
    metrics.backlog.set({ phase: 'submit' }, 9);
    await sampler.sampleOnce();
    expect(await value('backlog', 'poll')).toBe(42);
    expect(await value('oldestDueAge', 'poll')).toBe(7.5);
    expect(await value('backlog', 'submit')).toBe(0);
    expect((await metrics.workersAlive.get()).values[0].value).toBe(3);
  });

  it('samples on a timer until stopped, and reports failures without throwing', async () => {
    const { metrics } = setup();
    let calls = 0;
    const errors: unknown[] = [];
    const sampler = new BacklogSampler({
      metrics,
      intervalMs: 5,
      query: async () => {
        calls += 1;
        if (calls === 2) throw new Error('db down');
        return [];
      },
      onError: (e) => errors.push(e),
    });
    sampler.start();
    const deadline = Date.now() + 2_000;
    while (calls < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    await sampler.stop();
    const after = calls;
    await new Promise((r) => setTimeout(r, 30));
    expect(after).toBeGreaterThanOrEqual(4);
    expect(calls).toBe(after);
    expect(errors).toHaveLength(1);
  });
});

describe('labelled counters exported at 0 from start-up', () => {
  const series = async (metrics: GatewayMetrics, name: string) =>
    (await metrics.registry.getSingleMetric(name)!.get()).values.map((v) => ({
      labels: v.labels,
      value: v.value,
    }));

  it('the poller exports lease losses, rescues and claimed rows per phase at 0', async () => {
    const metrics = new GatewayMetrics(new Registry());
    metrics.primePollerSeries(['demo-ordinary'], ['demo']);
    for (const name of [
      'mcp_tasks_lease_lost_total',
      'mcp_tasks_rescued_total',
      'mcp_tasks_claimed_rows_total',
    ]) {
      expect(await series(metrics, name)).toEqual(
        ['submit', 'poll', 'cancel', 'deliver'].map((phase) => ({ labels: { phase }, value: 0 })),
      );
    }
  });

  it('the poller exports webhook outcomes, attempts and transitions per toolset at 0', async () => {
    const metrics = new GatewayMetrics(new Registry());
    metrics.primePollerSeries(['a', 'b'], ['s']);
    const outcomes = await series(metrics, 'mcp_tasks_webhook_deliveries_total');
    expect(outcomes.map((s) => s.labels.outcome)).toEqual(
      expect.arrayContaining(['ok', 'transient_error', 'dead_letter']),
    );
    const attempts = await series(metrics, 'mcp_tasks_attempts_total');
    // 2 toolsets × 3 task phases × 5 outcomes, every one at 0.
    expect(attempts).toHaveLength(30);
    expect(attempts.every((s) => s.value === 0)).toBe(true);
    expect(attempts).toContainEqual({
      labels: { phase: 'poll', toolset: 'b', outcome: 'lease_lost' },
      value: 0,
    });
    const transitions = await series(metrics, 'mcp_tasks_transitions_total');
    expect(transitions).toContainEqual({ labels: { toolset: 'a', to: 'failed' }, value: 0 });
  });

  it('the poller exports push wakes and lost subscriptions per server at 0', async () => {
    const metrics = new GatewayMetrics(new Registry());
    metrics.primePollerSeries(['a'], ['one', 'two']);
    for (const name of ['mcp_tasks_push_wakes_total', 'mcp_tasks_push_lost_total']) {
      expect(await series(metrics, name)).toEqual([
        { labels: { server: 'one' }, value: 0 },
        { labels: { server: 'two' }, value: 0 },
      ]);
    }
  });

  it('the API exports submit refusals per reason at 0', async () => {
    const metrics = new GatewayMetrics(new Registry());
    metrics.primeApiSeries();
    expect((await series(metrics, 'mcp_tasks_submit_refusals_total')).map((s) => s.labels)).toEqual(
      [
        { reason: 'rate_limited' },
        { reason: 'active_tasks_limited' },
        { reason: 'invalid_request' },
        { reason: 'unknown_toolset' },
        { reason: 'invalid_arguments' },
        { reason: 'idempotency_conflict' },
      ],
    );
  });
});

describe('DatabaseProbe', () => {
  const up = async (metrics: GatewayMetrics) => (await metrics.databaseUp.get()).values[0]?.value;

  // The timeout is the ping's own (Database.ping, database.spec.ts).
  it('reads 0 until a ping answers, 1 after, and 0 again when one does not', async () => {
    const metrics = new GatewayMetrics(new Registry());
    let answer: () => Promise<boolean> = async () => true;
    const probe = new DatabaseProbe({ metrics, ping: () => answer() });
    expect(await up(metrics)).toBe(0);
    expect(await probe.probeOnce()).toBe(true);
    expect(await up(metrics)).toBe(1);
    answer = async () => false;
    expect(await probe.probeOnce()).toBe(false);
    expect(await up(metrics)).toBe(0);
    answer = async () => true;
    await probe.probeOnce();
    answer = () => Promise.reject(new Error('ECONNREFUSED'));
    expect(await probe.probeOnce()).toBe(false);
    expect(await up(metrics)).toBe(0);
  });
});
