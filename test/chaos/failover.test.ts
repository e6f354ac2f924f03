// Guards against a Postgres failover (the primary crashes, its streaming standby is promoted, the same address then reaches it) losing, resubmitting, wrongly cancelling or stalling tasks of any contract.
import { join } from 'node:path';
import { Pool } from 'pg';
import { ApiKeyRepository, Database, migrateDatabase } from '@app/persistence';
import { MIGRATIONS } from '../../migrations';
import { INSTALL_LEASE_AUDIT_SQL } from '../../bench/chaos/lease-audit.sql';
import { startApiProcess, type ApiProcess } from '../helpers/api';
import { adminQuery } from '../helpers/db';
import { useProcesses } from '../helpers/process-scope';
import {
  describeWithFailoverTools,
  startFailoverPair,
  type FailoverPair,
} from '../helpers/postgres-failover';
import {
  demoServerEntry,
  ROOT,
  startDemoServer,
  startPoller,
  writeServersFile,
  type DemoServerProcess,
  type PollerProcess,
} from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

// One toolset per contract and era: ordinary and sync-call (demo_slow) on the 2025-11-25 side,
// native tasks on both sides of the same demo server.
const TOOLSETS = ['f-ordinary', 'f-ordinary-sync', 'f-native-2025', 'f-native-2026'];
const PER_TOOLSET = 4;
// Generous for a loaded 2-core box (at load 25, 2 s connects failed for a minute): a native
// submit's longest chain, two connects, discovery and the call, fits the 15 s lease. A server
// parked at start is probed again after 5 s, not the default 300 s.
const TIMEOUTS = { connectTimeoutMs: 4000, callTimeoutMs: 3000, parkedProbeMs: 5000 };

// Debian's PostgreSQL tools (pg_basebackup above all): skipped without them, an error under CI.
const describeWithTools = describeWithFailoverTools('the failover test');
// The pair's servers, the demo server, the API and the poller (docs/testing.md, "Processes go
// through a fixture").
const processes = useProcesses();

let pair: FailoverPair;
let pool: Pool;
let api: ApiProcess;
let demo: DemoServerProcess;
let apiKey: string;

interface Answer {
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
}

async function call(method: string, path: string, body?: unknown, key?: string): Promise<Answer> {
  const res = await fetch(`${api.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(key ? { 'idempotency-key': key } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

function submit(toolset: string, tag: string, durationMs: number): Promise<Answer> {
  return call(
    'POST',
    '/v1/threads/failover/tasks',
    { toolset, arguments: { tag, duration_ms: durationMs } },
    tag,
  );
}

describeWithTools('Postgres failover', () => {
  beforeAll(async () => {
    const [started, demoServer] = await Promise.all([
      startFailoverPair(join(ROOT, '.data', `failover-${process.pid}`)),
      startDemoServer(),
    ]);
    pair = started;
    demo = demoServer;
    await migrateDatabase(pair.url, MIGRATIONS, 'failover-test');
    await adminQuery(pair.url, INSTALL_LEASE_AUDIT_SQL);
    pool = new Pool({ connectionString: pair.url, max: 2 });
    // Its idle clients die with the primary; that must not be an unhandled error.
    pool.on('error', () => undefined);
    apiKey = (await new ApiKeyRepository(new Database(pool)).create('failover-user', 'test')).key;
    const native = (tool: string, name: string, era: Record<string, unknown>) => ({
      url: `${demo.url}/mcp`,
      ...era,
      ...TIMEOUTS,
      taskToolsets: [{ name, contract: 'mcp-tasks', tool }],
    });
    const serversFile = writeServersFile({
      demo: { ...demoServerEntry(demo.url, 'f-ordinary', { sync: true }), ...TIMEOUTS },
      native2025: native('demo_task_required', 'f-native-2025', { protocolVersion: '2025-11-25' }),
      native2026: native('demo_task', 'f-native-2026', {}),
    });
    let poller: PollerProcess;
    [api, poller] = await Promise.all([
      startApiProcess(pair.url),
      startPoller({ databaseUrl: pair.url, serversFile, env: { LEASE_MS: '15000' } }),
    ]);
    let catalog: unknown;
    await waitUntil(
      async () => {
        const items = (await call('GET', '/v1/toolsets')).body.items as
          { name: string; available: boolean }[] | undefined;
        catalog = items?.map((i) => `${i.name}${i.available ? '' : ' (unavailable)'}`);
        return TOOLSETS.every((name) => items?.some((i) => i.name === name && i.available))
          ? true
          : undefined;
      },
      () =>
        `every failover toolset in the catalog (listed: ${JSON.stringify(catalog)}; poller: ${JSON.stringify(poller.logs.filter((l) => l.level !== 'info' && l.level !== 30)).slice(0, 3000)})`,
      60_000,
      100,
    );
  }, 150_000);

  afterAll(async () => {
    // Every process, the pair's servers last, before the pair's proxy and directory go.
    await processes.stopAll();
    await pool?.end().catch(() => undefined);
    await pair?.stop();
  });

  test('a failover mid-run: every task completes, submitted once, none cancelled, claims resume', async () => {
    const tags = TOOLSETS.flatMap((toolset) =>
      Array.from({ length: PER_TOOLSET }, (_, i) => ({ toolset, tag: `fo-${toolset}-${i}` })),
    );
    const ids = new Map<string, string>();
    const answers = await Promise.all(tags.map(({ toolset, tag }) => submit(toolset, tag, 8000)));
    answers.forEach((answer, i) => {
      expect(answer.status).toBe(201);
      ids.set(tags[i].tag, String(answer.body.task_id));
    });
    // In flight: every task submitted upstream (a handle stored, or its sync call held).
    let states: string[] = [];
    await waitUntil(
      async () => {
        const result = await pool.query<{ toolset: string; status: string; last_error: string }>(
          `SELECT toolset, status, last_error FROM task_rows WHERE id = ANY($1)`,
          [[...ids.values()]],
        );
        states = result.rows.map((r) => `${r.toolset} ${r.status} ${r.last_error ?? ''}`);
        return result.rows.every((r) => r.status === 'working') ? true : undefined;
      },
      () => `every task working upstream (${states.join('; ')})`,
      20_000,
      50,
    );

    // SIGKILL, not a fast shutdown: a crash loses the replies in flight and says goodbye to no
    // client, the case a failover exists for (docs/chaos.md, "Postgres failover").
    await pair.crashPrimary();
    // While no primary answers: the API says so (503 with Retry-After), for a read and a submit.
    const read = await call('GET', `/v1/threads/failover/tasks/${ids.get(tags[0].tag)!}`);
    const during = await submit('f-ordinary', 'fo-during', 1000);
    await pair.promoteStandby();
    pair.switchToStandby();
    const switchedAt = Date.now();
    expect([read.status, during.status]).toEqual([503, 503]);
    expect([read.retryAfter, during.retryAfter]).toEqual([expect.any(String), expect.any(String)]);
    // The same submit once the switch is done: accepted, once.
    const after = await waitUntil(
      async () => {
        const answer = await submit('f-ordinary', 'fo-during', 1000);
        return answer.status < 500 ? answer : undefined;
      },
      'a submit accepted after the switch',
      15_000,
      100,
    );
    expect(after.status).toBe(201);
    ids.set('fo-during', String(after.body.task_id));

    const rows = await waitUntil(
      async () => {
        const result = await pool.query<{
          id: string;
          status: string;
          error_code: string | null;
        }>(`SELECT id, status, error_code FROM tasks WHERE id = ANY($1)`, [[...ids.values()]]);
        return result.rows.every((r) => ['completed', 'failed', 'cancelled'].includes(r.status))
          ? result.rows
          : undefined;
      },
      'every task terminal after the failover',
      30_000,
      100,
    );
    // No task lost: every accepted task is on the new primary, and each ended completed.
    expect(rows.map((r) => `${r.id} ${r.status} ${r.error_code ?? ''}`).sort()).toEqual(
      [...ids.values()].map((id) => `${id} completed `).sort(),
    );
    // Each submitted upstream exactly once; nothing cancelled upstream.
    const stats = await demo.stats();
    const upstream = [...ids.keys()].map((tag) => ({
      tag,
      submits: stats.by_tag[tag]?.submits,
      cancels: stats.by_tag[tag]?.cancels,
    }));
    expect(upstream).toEqual([...ids.keys()].map((tag) => ({ tag, submits: 1, cancels: 0 })));
    // Claims resumed on the new primary (the lease audit replicated with everything else).
    const claims = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM chaos_lease_audit
        WHERE new_token IS NOT NULL AND new_token IS DISTINCT FROM old_token
          AND at >= to_timestamp($1 / 1000.0)`,
      [switchedAt],
    );
    expect(claims.rows[0].n).toBeGreaterThan(0);
  }, 90_000);
});
