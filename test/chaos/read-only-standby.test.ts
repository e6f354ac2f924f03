// Guards docs/operations.md, "Database failover": when the address the apps use reaches a
// standby that takes no writes (a switchover the address has not followed yet), an API and a
// poller say they are not ready and why, the API answers writes 503 with Retry-After and still
// serves reads, no process exits, and both work again once that server takes writes, with no
// restart.
import { join } from 'node:path';
import { Pool } from 'pg';
import { ApiKeyRepository, Database, migrateDatabase } from '@app/persistence';
import { MIGRATIONS } from '../../migrations';
import { startApiProcess, type ApiProcess } from '../helpers/api';
import {
  describeWithFailoverTools,
  startFailoverPair,
  type FailoverPair,
} from '../helpers/postgres-failover';
import { useProcesses } from '../helpers/process-scope';
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

// Debian's PostgreSQL tools (pg_basebackup): skipped without them, an error under CI.
const describeWithTools = describeWithFailoverTools('the read-only standby test');
const processes = useProcesses();

let pair: FailoverPair;
let api: ApiProcess;
let poller: PollerProcess;
let apiKey: string;
let demo: DemoServerProcess;

async function get(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${apiKey}` } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function submit(
  tag: string,
): Promise<{ status: number; retryAfter: string | null; body: Record<string, unknown> }> {
  const res = await fetch(`${api.url}/v1/threads/read-only/tasks`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': tag,
    },
    body: JSON.stringify({ toolset: 'ro', arguments: { tag, duration_ms: 100 } }),
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

describeWithTools('a read-only standby behind the address', () => {
  beforeAll(async () => {
    let started: FailoverPair;
    [started, demo] = await Promise.all([
      startFailoverPair(join(ROOT, '.data', `read-only-${process.pid}`)),
      startDemoServer(),
    ]);
    pair = started;
    await migrateDatabase(pair.url, MIGRATIONS, 'read-only-test');
    const pool = new Pool({ connectionString: pair.url, max: 1 });
    try {
      apiKey = (await new ApiKeyRepository(new Database(pool)).create('ro-user', 'test')).key;
    } finally {
      await pool.end();
    }
    [api, poller] = await Promise.all([
      startApiProcess(pair.url),
      startPoller({
        databaseUrl: pair.url,
        serversFile: writeServersFile({ demo: demoServerEntry(demo.url, 'ro') }),
      }),
    ]);
    // The catalog is written while the primary takes writes: a submit is then refused only for
    // the write itself.
    await waitUntil(async () => {
      const items = (await get(`${api.url}/v1/toolsets`)).body.items as
        { name: string; available: boolean }[] | undefined;
      return items?.some((item) => item.name === 'ro' && item.available) || undefined;
    }, 'the toolset in the catalog');
  }, 120_000);

  afterAll(async () => {
    // The processes first, the pair's servers last, then its proxy and directory.
    await processes.stopAll();
    await pair?.stop();
  });

  test('not ready and 503 to writes while the server takes none; working again once it does', async () => {
    // The address now reaches the standby, and every open connection is gone: what the apps
    // meet after a switchover whose new address they have not learnt.
    pair.switchToStandby();
    pair.proxy.cutAll();

    const apiReady = `${api.url}/healthz/ready`;
    const pollerReady = `http://127.0.0.1:${poller.metricsPort}/healthz/ready`;
    await waitUntil(
      async () => ((await get(apiReady)).status === 503 ? true : undefined),
      'the API not ready',
    );
    expect((await get(apiReady)).body).toMatchObject({ detail: 'The database takes no writes.' });
    const refused = await submit('ro-1');
    expect([refused.status, refused.body.type]).toEqual([
      503,
      expect.stringMatching(/unavailable$/),
    ]);
    expect(refused.retryAfter).toEqual(expect.any(String));
    // Reads are still served.
    expect((await get(`${api.url}/v1/threads/read-only/tasks`)).status).toBe(200);
    await waitUntil(
      async () => ((await get(pollerReady)).status === 503 ? true : undefined),
      'the poller not ready',
    );
    expect((await get(pollerReady)).body).toMatchObject({ status: 'database takes no writes' });
    // A poller started now gets through its start-up wait (the schema check only reads), and
    // its worker row is refused: it waits, as for a database that is down.
    const late = await startPoller({
      databaseUrl: pair.url,
      serversFile: writeServersFile({ demo: demoServerEntry(demo.url, 'ro') }),
      waitReady: false,
    });
    await waitUntil(
      () => late.logs.some((line) => line.msg === 'database not answering yet') || undefined,
      'the late poller waiting to register',
    );
    expect([api.process.child.exitCode, poller.child.exitCode, late.child.exitCode]).toEqual([
      null,
      null,
      null,
    ]);

    // The server is promoted: it takes writes, and the same processes work on it.
    await pair.promoteStandby();
    await waitUntil(
      async () => ((await get(apiReady)).status === 200 ? true : undefined),
      'the API ready again',
    );
    const accepted = await waitUntil(async () => {
      const answer = await submit('ro-1');
      return answer.status < 500 ? answer : undefined;
    }, 'the submit accepted');
    expect(accepted.status).toBe(201);
    await waitUntil(
      async () => ((await get(pollerReady)).status === 200 ? true : undefined),
      'the poller ready again',
    );
    await waitUntil(
      async () =>
        (await fetch(`http://127.0.0.1:${late.metricsPort}/healthz/ready`)).status === 200 ||
        undefined,
      'the late poller registered and ready',
    );
    const taskUrl = `${api.url}/v1/threads/read-only/tasks/${String(accepted.body.task_id)}`;
    await waitUntil(
      async () => ((await get(taskUrl)).body.status === 'completed' ? true : undefined),
      'the task completed',
      30_000,
    );
  });
});
