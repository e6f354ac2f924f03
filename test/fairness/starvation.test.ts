// Guards docs/leases.md, "Fair share": a quiet principal's task is not starved behind a flood.
import { useFleet } from '../helpers/fleet';
import { demoServerEntry, FAST_POLLER_ENV, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();
const POLLERS = 2;
const SLOTS = Number(FAST_POLLER_ENV.WORKER_SLOTS);
const FLOOD = 10_000;

it('B submits one task behind A’s 10,000: it is claimed within one claim per poller', async () => {
  const demo = await fleet.demo();
  const serversFile = writeServersFile({
    demo: demoServerEntry(demo.url, 'demo', { sync: true, maxConcurrentCalls: SLOTS }),
  });
  await Promise.all(Array.from({ length: POLLERS }, () => fleet.poller(serversFile)));
  // sync-call tasks: each is claimed once, for its submit, and submit_started_at records when.
  await fleet.db.query(
    `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input)
     SELECT 'task_flood' || g, 'noisy', 'thread-1', 'demo-sync', 'sync-call', 'demo', 'queued',
            '{"duration_ms": 300}'::jsonb
       FROM generate_series(1, $1::int) AS g`,
    [FLOOD],
  );
  // The pollers are busy with the flood before B arrives.
  await waitUntil(async () => {
    const rows = await fleet.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tasks WHERE user_id = 'noisy' AND submit_started_at IS NOT NULL`,
    );
    return rows[0].n >= 50 ? true : undefined;
  }, 'the flood being worked on');
  await fleet.db.query(
    `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input)
     VALUES ('task_quiet', 'quiet', 'thread-1', 'demo-sync', 'sync-call', 'demo', 'queued',
             '{"duration_ms": 300}'::jsonb)`,
  );
  await waitUntil(
    async () => {
      const rows = await fleet.db.query(
        `SELECT 1 FROM tasks WHERE id = 'task_quiet' AND submit_started_at IS NOT NULL`,
      );
      return rows.length > 0 ? true : undefined;
    },
    'the quiet task claimed',
    60_000,
    50,
  );
  const [ahead] = await fleet.db.query<{ claimed_ahead: number; waiting: number }>(
    `SELECT count(*) FILTER (WHERE a.submit_started_at > b.created_at
                               AND a.submit_started_at < b.submit_started_at)::int AS claimed_ahead,
            count(*) FILTER (WHERE a.submit_started_at IS NULL)::int AS waiting
       FROM tasks a, tasks b
      WHERE a.user_id = 'noisy' AND b.id = 'task_quiet'`,
  );
  // Most of the flood was still due: B did not simply wait for it to drain.
  expect(ahead.waiting).toBeGreaterThan(FLOOD / 2);
  // The bound (docs/leases.md): B's row is taken by the first claim that starts after it is due,
  // on any poller with a free slot; each poller may have one claim already running (that cannot
  // see it), and the rows of the claim that takes it start in any order. So at most
  // (pollers + 1) claims of at most SLOTS rows each go first. In due order alone: thousands.
  expect(ahead.claimed_ahead).toBeLessThanOrEqual((POLLERS + 1) * SLOTS);
});
