// Guards leases.md's rule that every lease time comes from the database clock: a poller whose own
// clock runs an hour ahead still writes leases, due times and heartbeats relative to the
// database's now(), and its tasks run as on any other poller.
import { join } from 'node:path';
import { useFleet } from '../helpers/fleet';
import { countTerminal, insertFleetTasks, taskStates } from '../helpers/fleet-tasks';
import { demoServerEntry, FAST_POLLER_ENV, ROOT } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();
const SHIFTED_CLOCK = join(ROOT, 'dist', 'test', 'fixtures', 'shifted-clock.js');
const HOUR_MS = 3_600_000;
const LEASE_MS = Number(FAST_POLLER_ENV.LEASE_MS);

interface Sample {
  lease_left_ms: number | null;
  due_in_ms: number | null;
}

it('a poller an hour ahead of the database writes every time from the database clock', async () => {
  const demo = await fleet.demo();
  const poller = await fleet.poller(
    { demo: demoServerEntry(demo.url, 'demo-ordinary') },
    { env: { NODE_OPTIONS: `--require ${SHIFTED_CLOCK}`, CLOCK_OFFSET_MS: String(HOUR_MS) } },
  );
  // The shift took: its log lines carry the poller's own (shifted) time.
  const logged = Date.parse(String(poller.logs.find((line) => line.time !== undefined)?.time));
  expect(logged - Date.now()).toBeGreaterThan(HOUR_MS - 60_000);

  const ids = await insertFleetTasks(
    fleet.db,
    Array.from({ length: 10 }, (_, i) => ({
      toolset: 'demo-ordinary',
      server: 'demo',
      input: { duration_ms: 1500, tag: `clock-${i}` },
    })),
  );
  const samples: Sample[] = [];
  await waitUntil(
    async () => {
      samples.push(
        ...(await fleet.db.query<Sample>(
          // clock_timestamp(), not now(): now() is fixed when this statement's transaction
          // starts, before its snapshot, so a lease written by a transaction that started a
          // moment later and committed before the snapshot would read as more than LEASE_MS.
          `SELECT extract(epoch FROM lease_expires_at - clock_timestamp()) * 1000 AS lease_left_ms,
                  extract(epoch FROM next_attempt_at - clock_timestamp()) * 1000 AS due_in_ms
             FROM task_rows WHERE id = ANY($1)`,
          [ids],
        )),
      );
      return (await countTerminal(fleet.db, ids)) === ids.length ? true : undefined;
    },
    'all tasks terminal',
    30_000,
    20,
  );
  const leases = samples.map((s) => s.lease_left_ms).filter((ms) => ms !== null);
  const dues = samples.map((s) => s.due_in_ms).filter((ms) => ms !== null);
  expect(leases.length).toBeGreaterThan(0);
  expect(dues.length).toBeGreaterThan(0);
  // A lease ends at most LEASE_MS after the database's now(), never an hour later.
  expect(Math.max(...leases)).toBeLessThanOrEqual(LEASE_MS + 1);
  // Due times are within the poll backoff of now(), not an hour out.
  expect(Math.max(...dues)).toBeLessThan(60_000);

  const states = [...(await taskStates(fleet.db, ids)).values()];
  expect(states.map((s) => s.status)).toEqual(ids.map(() => 'completed'));
  const [row] = await fleet.db.query<{ heartbeat_age_ms: number; completed_age_ms: number }>(
    `SELECT extract(epoch FROM now() - w.heartbeat_at) * 1000 AS heartbeat_age_ms,
            (SELECT extract(epoch FROM now() - max(completed_at)) * 1000
               FROM tasks WHERE id = ANY($2)) AS completed_age_ms
       FROM workers w WHERE w.id = $1`,
    [poller.workerId, ids],
  );
  expect(Math.abs(row.heartbeat_age_ms)).toBeLessThan(60_000);
  expect(Math.abs(row.completed_age_ms)).toBeLessThan(60_000);
});
