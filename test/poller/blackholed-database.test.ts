// Guards against a database host that vanishes without closing its connections (a node lost, a
// partition; docs/operations.md, "Database failover"): a statement sent on such a connection is
// never answered and no error ever comes. A poller and an API whose every open connection goes
// silent at once must give each statement up after DATABASE_STATEMENT_TIMEOUT_MS, work on with
// new connections, and find their LISTEN connections (which hold no statement) dead by their
// liveness check and reopen them: the heartbeat lands again, a task submitted after the fault
// completes, a later one is claimed through its NOTIFY, all within a few timeouts.
import request from 'supertest';
import { apiKeyFor, bearer } from '../helpers/api';
import { useFleet } from '../helpers/fleet';
import {
  countTerminal,
  insertFleetTasks,
  submitViolations,
  waitAllTerminal,
} from '../helpers/fleet-tasks';
import { demoServerEntry } from '../helpers/processes';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitUntil } from '../helpers/wait';

const STATEMENT_TIMEOUT_MS = 2000;
/** How soon after the fault everything must be back: a small multiple of the timeout. */
const RECOVERED_WITHIN_MS = 6 * STATEMENT_TIMEOUT_MS;
const TOOLSET = 'blackhole';

const fleet = useFleet();
let proxy: TcpProxy | undefined;

// Before the fleet's processes stop: closing the proxy ends the silent connections, so a
// process that did not recover (the failure this file looks for) still shuts down.
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});

/** When `appName`'s LISTEN connection that is open now started, by the database's clock. */
async function listenStartedAfter(appName: string, since: Date): Promise<true | undefined> {
  const rows = await fleet.db.query(
    `SELECT 1 FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = $1 AND backend_start > $2`,
    [`${appName}-listen`, since],
  );
  return rows.length > 0 ? true : undefined;
}

it('a poller and an API whose connections all go silent recover within a few statement timeouts', async () => {
  proxy = await startTcpProxy(Number(new URL(fleet.url).port || 5432));
  const viaProxy = new URL(fleet.url);
  viaProxy.port = String(proxy.port);
  const env = {
    DATABASE_URL: viaProxy.toString(),
    DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
  };
  const demo = await fleet.demo();
  // No fallback claim within the test: a task claimed promptly was woken by its NOTIFY.
  const poller = await fleet.poller(
    { demo: demoServerEntry(demo.url, TOOLSET) },
    { env: { ...env, CLAIM_FALLBACK_INTERVAL_MS: '600000' } },
  );
  const api = await fleet.api(env);
  const auth = bearer(await apiKeyFor({ db: fleet.database }, 'user-1'));
  const submit = (key: string) =>
    request(api.url)
      .post('/v1/threads/thread-1/tasks')
      .set('Authorization', auth)
      .set('Idempotency-Key', key)
      .send({ toolset: TOOLSET, arguments: { duration_ms: 500, tag: key } })
      // Without a bound of its own a request on a silent connection would wait for ever.
      .timeout(3 * STATEMENT_TIMEOUT_MS);
  await waitUntil(
    async () => ([200, 201].includes((await submit('warm-up')).status) ? true : undefined),
    'the toolset in the catalog and the key known',
    30_000,
  );

  // Work under way on every kind of connection: tasks running upstream, the claim, heartbeats
  // and writes on the pool, both LISTEN connections open.
  const before = await insertFleetTasks(
    fleet.db,
    Array.from({ length: 6 }, (_, i) => ({
      toolset: TOOLSET,
      server: 'demo',
      // 5 s: long enough that the wait below sees one working on a slow host.
      input: { duration_ms: 5000, tag: `before-${i}` },
    })),
  );
  await waitUntil(async () => {
    const rows = await fleet.db.query(
      `SELECT 1 FROM tasks WHERE id = ANY($1) AND status = 'working' LIMIT 1`,
      [before],
    );
    return rows.length > 0 ? true : undefined;
  }, 'work under way');
  const [{ darkAt }] = await fleet.db.query<{ darkAt: Date }>(`SELECT now() AS "darkAt"`);
  proxy.blackhole();
  const darkSince = Date.now();
  /** What is left of the bound, counted from the fault: every wait below shares it. */
  const left = () => Math.max(0, darkSince + RECOVERED_WITHIN_MS - Date.now());
  const saidMeanwhile = () =>
    `; poller said ${JSON.stringify(poller.logs.slice(-8).map((l) => l.msg))}`;

  // The API answers (a 503 while its silent connections time out) and takes the submit (a 200
  // when an earlier try committed and its answer was lost).
  const created = await waitUntil(
    async () => {
      const res = await submit('after');
      return [200, 201].includes(res.status) ? (res.body as { task_id: string }) : undefined;
    },
    () => `the API to take a submit again${saidMeanwhile()}`,
    left(),
  );
  // The poller's heartbeat lands again.
  await waitUntil(
    async () => {
      const rows = await fleet.db.query(
        `SELECT 1 FROM workers WHERE id = $1 AND heartbeat_at > $2`,
        [poller.workerId, darkAt],
      );
      return rows.length > 0 ? true : undefined;
    },
    () => `a heartbeat after the fault${saidMeanwhile()}`,
    left(),
  );
  // The task submitted after the fault completes.
  await waitUntil(
    async () => {
      const [row] = await fleet.db.query<{ status: string }>(
        `SELECT status FROM tasks WHERE id = $1`,
        [created.task_id],
      );
      return row.status === 'completed' ? true : undefined;
    },
    () => `the task submitted after the fault to complete${saidMeanwhile()}`,
    left(),
  );
  // Both LISTEN connections were found dead and opened again.
  await waitUntil(
    async () =>
      (await listenStartedAfter('mcp-task-gateway-poller', darkAt)) &&
      (await listenStartedAfter('mcp-task-gateway-api', darkAt)),
    () => `both LISTEN connections open again${saidMeanwhile()}`,
    left(),
  );
  // And each listener logged the outage: the poller's that it reconnected (a line written only
  // after its LISTEN ran, so after its backend shows in pg_stat_activity), the API's that it
  // lost its connection. Both are read from the processes' pipes, later still on a loaded machine.
  await waitUntil(
    () =>
      poller.logs.some((l) => l.msg === 'notification listener reconnected') &&
      api.process.lines.some((l) => l.includes('API key revoke listener lost'))
        ? true
        : undefined,
    () => `both listeners' lines about the outage${saidMeanwhile()}`,
    Math.max(left(), 5_000),
  );

  // Nothing lost: every task ends, each submitted at most once, and only a submit on the wire
  // at the fault may end outcome_uncertain (submitViolations).
  const tasks = [...before, created.task_id];
  await waitAllTerminal(fleet.db, tasks, 'every task to end', 30_000);
  expect(await submitViolations(fleet.db, tasks, (await demo.stats()).by_tag)).toEqual([]);

  // The poller is idle, its fallback claim ten minutes away: a task inserted now is claimed
  // only if the reopened LISTEN connection delivers its NOTIFY.
  const [probe] = await insertFleetTasks(fleet.db, [
    { toolset: TOOLSET, server: 'demo', input: { duration_ms: 100, tag: 'probe' } },
  ]);
  await waitUntil(
    async () => ((await countTerminal(fleet.db, [probe])) === 1 ? true : undefined),
    () => `the probe task claimed through its NOTIFY${saidMeanwhile()}`,
    RECOVERED_WITHIN_MS,
  );
  expect(poller.child.exitCode).toBeNull();
});
