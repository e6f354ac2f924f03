// Guards retention: only terminal tasks older than RETENTION_DAYS are deleted, in batches, and
// dead `workers` rows are pruned unless they still pin a live task.
import { newTaskId } from '@app/common';
import { useFleet } from '../helpers/fleet';
import { setDueIn } from '../helpers/tasks';
import { demoServerEntry, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();

async function insert(count: number, terminal: boolean, completedDaysAgo: number): Promise<void> {
  const ids = Array.from({ length: count }, () => newTaskId());
  await fleet.db.query(
    `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input,
                        created_at, completed_at)
     SELECT id, 'u', 't', 'demo-ordinary', 'ordinary', 'demo',
            CASE WHEN $2 THEN 'completed' ELSE 'working' END, '{}'::jsonb,
            now() - make_interval(days => $3 + 1),
            CASE WHEN $2 THEN now() - make_interval(days => $3) END
       FROM unnest($1::text[]) AS id`,
    [ids, terminal, completedDaysAgo],
  );
  if (!terminal) await setDueIn(fleet.db, ids, 86_400_000);
}

async function count(where: string): Promise<number> {
  const rows = await fleet.db.query<{ n: string }>(
    `SELECT count(*) AS n FROM tasks WHERE ${where}`,
  );
  return Number(rows[0].n);
}

it('deletes 1,200 expired terminal rows and keeps young terminal and old active ones', async () => {
  await insert(1200, true, 40); // expired: more than two 500-row batches
  await insert(30, true, 29); // terminal but younger than RETENTION_DAYS
  await insert(20, false, 40); // old but not terminal: never deleted
  const serversFile = writeServersFile({
    demo: demoServerEntry('http://127.0.0.1:9', 'demo-ordinary'),
  });
  await fleet.poller(serversFile, { env: { RETENTION_DAYS: '30' } });
  await waitUntil(
    async () =>
      (await count(`completed_at < now() - interval '30 days'`)) === 0 ? true : undefined,
    'expired rows deleted',
    20_000,
    100,
  );
  expect(await count(`status = 'completed'`)).toBe(30);
  expect(await count(`status = 'working'`)).toBe(20);
});

it('prunes long-dead workers rows that pin nothing, and keeps one that pins a live task', async () => {
  await fleet.db.query(
    `INSERT INTO workers (id, host, pid, version, started_at, heartbeat_at, stopped_at)
     VALUES ('gone', 'h', 1, 'v', now() - interval '2 days', now() - interval '2 days', NULL),
            ('stopped', 'h', 2, 'v', now() - interval '2 days', now() - interval '2 days',
             now() - interval '2 days'),
            ('pinning', 'h', 3, 'v', now() - interval '2 days', now() - interval '2 days', NULL),
            ('recent', 'h', 4, 'v', now(), now() - interval '1 minute', NULL)`,
  );
  const [pinned] = await fleet.db.query<{ id: string }>(
    `INSERT INTO tasks (id, user_id, thread_id, toolset, contract, server, status, input,
                        pinned_worker_id)
     VALUES ($1, 'u', 't', 'demo-native', 'mcp-tasks', 'demo', 'working', '{}'::jsonb, 'pinning')
     RETURNING id`,
    [newTaskId()],
  );
  expect(pinned).toBeDefined();
  await setDueIn(fleet.db, [pinned.id], 86_400_000);
  const serversFile = writeServersFile({
    demo: demoServerEntry('http://127.0.0.1:9', 'demo-ordinary'),
  });
  const poller = await fleet.poller(serversFile);
  const ids = async (): Promise<string[]> =>
    (await fleet.db.query<{ id: string }>(`SELECT id FROM workers ORDER BY id`)).map((r) => r.id);
  await waitUntil(
    async () => ((await ids()).includes('gone') ? undefined : true),
    'the dead worker row pruned',
    20_000,
    100,
  );
  const left = await ids();
  expect(left).not.toContain('stopped');
  expect(left).toEqual(expect.arrayContaining(['pinning', 'recent', poller.workerId]));
});
