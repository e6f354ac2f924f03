// Guards invariant 6 and the API's refusals when the database's disk is full, a fault the gateway
// does not control: writes that need new space fail with SQLSTATE 53100 for longer than a lease.
// A submit answered meanwhile keeps its remote handle (the poller keeps the claim by renewing the
// narrow lease row, which still fits, and stores the handle once space is freed), the API answers
// 503 with Retry-After instead of 500, and every task completes, submitted once. The disk is a
// real one: a tmpfs holding the tablespace of the gateway's database on a Postgres of this file's
// own (a full tablespace fails the server's checkpoints, so never the run's shared server). Needs
// root, to mount it; skipped with a warning otherwise (docs/testing.md, "Tests that need root").
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import request from 'supertest';
import { ApiKeyRepository, Database, migrateDatabase } from '@app/persistence';
import { MIGRATIONS } from '../../migrations';
import { ApiProcess, bearer, startApiProcess } from '../helpers/api';
import { adminQuery, testPool, withDatabase } from '../helpers/db';
import {
  insertFleetTasks,
  submitViolations,
  taskStates,
  waitToolsetsAvailable,
} from '../helpers/fleet-tasks';
import {
  FAST_POLLER_ENV,
  demoServerEntry,
  startDemoServer,
  startPoller,
  stopAllProcesses,
  writeServersFile,
} from '../helpers/processes';
import { useOwnPostgres } from '../helpers/postgres-process';
import { waitUntil } from '../helpers/wait';

const LEASE_MS = Number(FAST_POLLER_ENV.LEASE_MS);
const DISK_FULL = '53100';
const FAILED_HANDLE_WRITE = 'storing the remote handle failed; retrying';

/** Why tmpfs cannot be mounted here, or undefined when it can (tried once, on a scratch folder). */
function whyNoMount(): string | undefined {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const dir = mkdtempSync(join(tmpdir(), 'mtg-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `mount -t tmpfs failed: ${String(error)}`;
  } finally {
    rmdirSync(dir);
  }
}

/** Runs `sql` until the database answers 53100; any other error is the test's failure. */
async function fillUntilFull(db: Database, sql: string): Promise<void> {
  for (let i = 0; i < 100_000; i++) {
    try {
      // Triggers off: a filler task writes no lease row and no event.
      await db.transaction(async (tx) => {
        await tx.query('SET LOCAL session_replication_role = replica');
        await tx.query(sql);
      });
    } catch (error) {
      if ((error as { code?: string }).code === DISK_FULL) return;
      throw error;
    }
  }
  throw new Error(`never full: ${sql}`);
}

const skipped = whyNoMount();
if (skipped) console.warn(`test/poller/handle-write-disk-full.test.ts skipped: ${skipped}`);

(skipped ? describe.skip : describe)('a full disk under the gateway database', () => {
  let mountDir: string | undefined;
  let gatewayUrl: string | undefined;
  let pool: ReturnType<typeof testPool> | undefined;
  let api: ApiProcess | undefined;
  // Declared before the own Postgres, so it runs first: the tablespace goes while the server
  // runs, and the tmpfs is unmounted before that server's folder is removed.
  afterAll(async () => {
    await Promise.all([api?.process.kill(), stopAllProcesses()]);
    await pool?.end();
    if (gatewayUrl) {
      await adminQuery(postgres.url, 'DROP DATABASE IF EXISTS gateway WITH (FORCE)');
      await adminQuery(postgres.url, 'DROP TABLESPACE IF EXISTS tiny');
    }
    if (mountDir) {
      execFileSync('umount', [mountDir]);
      rmdirSync(mountDir);
    }
  });
  const postgres = useOwnPostgres('diskfull', 2);

  beforeAll(async () => {
    // The tablespace's folder must belong to the server's OS user (an unprivileged one under
    // root): beside its data directory, which that user reaches.
    const [{ data_directory: dataDir }] = await postgres.db.query<{ data_directory: string }>(
      'SHOW data_directory',
    );
    const owner = statSync(dataDir);
    mountDir = join(dirname(dataDir), 'tiny');
    mkdirSync(mountDir);
    execFileSync('mount', [
      '-t',
      'tmpfs',
      '-o',
      `size=16m,uid=${owner.uid},gid=${owner.gid},mode=0700`,
      'tmpfs',
      mountDir,
    ]);
    await adminQuery(postgres.url, `CREATE TABLESPACE tiny LOCATION '${mountDir}'`);
    await adminQuery(postgres.url, 'CREATE DATABASE gateway TABLESPACE tiny');
    gatewayUrl = withDatabase(postgres.url, 'gateway');
    await migrateDatabase(gatewayUrl, MIGRATIONS, 'diskfull-test');
    pool = testPool(gatewayUrl, 2);
  });

  it('keeps handles and claims through it, answers 503, and completes every task once space is back', async () => {
    const db = new Database(pool!);
    const url = gatewayUrl!;
    const demo = await startDemoServer();
    const apiUrl = (api = await startApiProcess(url)).url;
    const { key } = await new ApiKeyRepository(db).create('user-1', 'diskfull');
    const poller = await startPoller({
      databaseUrl: url,
      serversFile: writeServersFile({ demo: demoServerEntry(demo.url, 'demo-ordinary') }),
    });

    await waitToolsetsAvailable(db, 1);
    // A gateway that has worked: a task through the API to its end, so every table the work
    // writes has pages; vacuumed, so their free room is known and reused (and kept: no truncation).
    const warmUp = await request(apiUrl)
      .post('/v1/threads/thread-1/tasks')
      .set('Authorization', bearer(key))
      .send({ toolset: 'demo-ordinary', arguments: { duration_ms: 0, tag: 'disk-full-warm-up' } })
      .expect(201);
    await waitUntil(
      async () =>
        (await taskStates(db, [warmUp.body.task_id as string])).get(warmUp.body.task_id as string)
          ?.status === 'completed' || undefined,
      'the warm-up task completed',
    );
    await db.query('VACUUM (TRUNCATE false) tasks, task_leases');

    // The disk full: first a filler table, until the tablespace cannot grow; then the event
    // log's pages, so the `task.working` event of a handle write has no room either. What is
    // left: room in the pages of `tasks` (a submit mark fits) and `task_leases` (claims and
    // renewals fit), as on a real disk that filled up under a running gateway.
    await db.query('CREATE TABLE filler (x text)');
    await fillUntilFull(
      db,
      `INSERT INTO filler SELECT repeat('x', 1000) FROM generate_series(1, 1000)`,
    );
    await fillUntilFull(db, `INSERT INTO filler SELECT repeat('x', 1000)`);
    await fillUntilFull(
      db,
      `INSERT INTO task_events (task_id, user_id, thread_id, sequence, type, task, data)
       VALUES ('task_filler' || nextval('task_events_id_seq'), 'filler', 'filler', 1,
               'task.progress', '{}', '{}')`,
    );

    const ids = await insertFleetTasks(
      db,
      [1, 2, 3].map((n) => ({
        toolset: 'demo-ordinary',
        server: 'demo',
        input: { duration_ms: 300, tag: `disk-full-${n}` },
      })),
    );
    // Each submit goes out and its answer comes back; storing it fails for want of space.
    const claims = await waitUntil(
      async () => {
        const failed = poller.logs.filter(
          (l) => l.msg === FAILED_HANDLE_WRITE && (l.err as { code?: string })?.code === DISK_FULL,
        );
        const tasks = new Set(failed.map((l) => l.task_id));
        if (!ids.every((id) => tasks.has(id))) return undefined;
        return db.query<{ task_id: string; lease_token: string; at: Date }>(
          `SELECT task_id, lease_token, now() AS at FROM task_leases WHERE task_id = ANY($1)`,
          [ids],
        );
      },
      () => `every handle write failing; the poller logged: ${recentMessages(poller.logs)}`,
    );
    expect(claims).toHaveLength(3);

    // While full, `tasks` too (its pages filled the same way, after the submit marks landed): a
    // submit is refused as busy, never as an internal error. Filler rows are not a submit's twins
    // (an index page a filler's key needs may be full where a submit's key finds room), so the
    // API is asked until it refuses; the submits it still takes are tasks like any other.
    await fillUntilFull(
      db,
      `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input,
                          submitted_at, completed_at)
       VALUES ('task_filler' || nextval('task_events_id_seq'), 'user-1', 'thread-1',
               'demo-ordinary', 'ordinary', 'demo', 'completed', '{}', now(), now())`,
    );
    const answers: number[] = [];
    const refused = await waitUntil(
      async () => {
        const answer = await request(apiUrl)
          .post('/v1/threads/thread-1/tasks')
          .set('Authorization', bearer(key))
          .send({
            toolset: 'demo-ordinary',
            arguments: { duration_ms: 300, tag: `disk-full-api-${answers.length}` },
          });
        answers.push(answer.status);
        return answer.status === 201 ? undefined : answer;
      },
      () => `a submit refused; the API answered ${answers.join(', ')}`,
    );
    expect([refused.status, refused.body.type]).toEqual([
      503,
      'https://mcp-task-gateway.dev/problems/unavailable',
    ]);
    expect(refused.headers['retry-after']).toBe('1');

    // Three leases of a full disk: each claim is still the first one, its lease alive. Before,
    // the handle was given up after two leases, and the task ended outcome_uncertain with its
    // upstream work left running.
    const startedAt = claims[0].at.getTime();
    await waitUntil(
      async () => {
        const [{ now }] = await db.query<{ now: Date }>('SELECT now()');
        return now.getTime() >= startedAt + 3 * LEASE_MS ? true : undefined;
      },
      'three leases of a full disk',
      3 * LEASE_MS + 15_000,
      200,
    );
    const held = await db.query<{ task_id: string; lease_token: string; alive: boolean }>(
      `SELECT task_id, lease_token, lease_expires_at > now() AS alive
         FROM task_leases WHERE task_id = ANY($1) ORDER BY task_id`,
      [ids],
    );
    expect(held).toEqual(
      [...claims]
        .sort((a, b) => a.task_id.localeCompare(b.task_id))
        .map((c) => ({ task_id: c.task_id, lease_token: c.lease_token, alive: true })),
    );
    expect((await taskStates(db, ids)).size).toBe(3);

    // Space again: the handles land, and every task completes, submitted once.
    await db.query('DROP TABLE filler');
    await waitUntil(
      async () => {
        const states = [...(await taskStates(db, ids)).values()];
        return states.every((s) => s.status === 'completed') ? true : undefined;
      },
      () => `every task completed; the poller logged: ${recentMessages(poller.logs)}`,
      30_000,
      200,
    );
    expect(await submitViolations(db, ids, (await demo.stats()).by_tag)).toEqual([]);
    // No handle given up, none cancelled as orphaned.
    expect(poller.logs.filter((l) => l.level === 'error' && /handle/.test(String(l.msg)))).toEqual(
      [],
    );
    await request(apiUrl)
      .post('/v1/threads/thread-1/tasks')
      .set('Authorization', bearer(key))
      .send({ toolset: 'demo-ordinary', arguments: { duration_ms: 300, tag: 'disk-full-api' } })
      .expect(201);
  });
});

/** The poller's last few log messages, for a timeout's error. */
function recentMessages(logs: Record<string, unknown>[]): string {
  return JSON.stringify(logs.slice(-12).map((l) => [l.msg, l.err ?? l.reason ?? l.to]));
}
