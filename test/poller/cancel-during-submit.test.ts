// Guards invariant 6: a cancel arriving during an in-flight submit keeps the handle and cancels upstream.
import { TaskRepository } from '@app/persistence';
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates } from '../helpers/fleet-tasks';
import { demoServerEntry, startDemoServer, writeServersFile } from '../helpers/processes';
import { waitUntil } from '../helpers/wait';

const fleet = useFleet();

it('stores the remote handle, then cancels the upstream task', async () => {
  const demo = await startDemoServer();
  const serversFile = writeServersFile({ demo: demoServerEntry(demo.url, 'demo-ordinary') });
  await fleet.poller(serversFile);
  // Connected first (the catalog says so): a submit that never left would rightly be retried,
  // and this test is about one that did.
  await waitUntil(async () => {
    const rows = await fleet.db.query<{ available: boolean }>(
      `SELECT available FROM toolsets WHERE name = 'demo-ordinary'`,
    );
    return rows[0]?.available ? true : undefined;
  }, 'the upstream connected');
  // Freeze the upstream so the submit is on the wire, unanswered, when the cancel arrives.
  demo.child.kill('SIGSTOP');
  let resumed = false;
  try {
    const [id] = await insertFleetTasks(fleet.db, [
      { toolset: 'demo-ordinary', server: 'demo', input: { duration_ms: 60_000, tag: 'inflight' } },
    ]);
    await waitUntil(
      async () => {
        const rows = await fleet.db.query(
          `SELECT 1 FROM tasks WHERE id = $1 AND submit_started_at IS NOT NULL`,
          [id],
        );
        return rows.length > 0 ? true : undefined;
      },
      'the submit to start',
      10_000,
      10,
    );
    // The API's cancel, as DELETE /v1/threads/…/tasks/… runs it: for a task whose submit
    // already started, it records the request only.
    const cancel = await new TaskRepository(fleet.db).requestCancel('user-1', id);
    expect(cancel.kind).toBe('accepted');
    demo.child.kill('SIGCONT');
    resumed = true;
    const final = await waitUntil(
      async () => {
        const state = (await taskStates(fleet.db, [id])).get(id)!;
        return state.completed_at ? state : undefined;
      },
      'the task to end',
      15_000,
    );
    expect(final.status).toBe('cancelled');
    expect(final.remote_task_id).toMatch(/^job_/);
    const stats = await demo.stats('inflight');
    expect(stats.by_tag.inflight).toMatchObject({ submits: 1, cancels: 1, cancelled: true });
  } finally {
    if (!resumed) demo.child.kill('SIGCONT');
  }
});
