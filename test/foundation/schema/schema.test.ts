// Guards the schema's own rules: illegal transitions and changes to terminal rows are refused by
// the database, an active task is exactly a task with a lease row whoever writes it, the view the
// code reads has every column of the task, and the claim uses the partial due index.
import { CLAIM_SQL } from '@app/persistence';
import { useTestDatabase } from '../../helpers/db';
import { insertTasks } from '../../helpers/tasks';

const t = useTestDatabase();

describe('status model in SQL', () => {
  it.each([
    ['working', 'queued'],
    ['input_required', 'queued'],
  ])('refuses %s -> %s', async (from, to) => {
    const [id] = await insertTasks(t.db, 1, { status: from });
    await expect(
      t.db.query(`UPDATE tasks SET status = $2 WHERE id = $1`, [id, to]),
    ).rejects.toThrow(/illegal task transition/);
  });

  // A server may answer a submit at once (queued -> completed) or ask first (-> input_required).
  it('allows queued -> completed', async () => {
    const [id] = await insertTasks(t.db, 1, { status: 'queued' });
    const rows = await t.db.query(
      `UPDATE tasks SET status = 'completed', completed_at = now()
        WHERE id = $1 RETURNING status`,
      [id],
    );
    expect(rows[0]).toEqual({ status: 'completed' });
  });

  it.each([
    ['queued', 'working'],
    ['queued', 'input_required'],
    ['working', 'input_required'],
    ['input_required', 'working'],
  ])('allows %s -> %s', async (from, to) => {
    const [id] = await insertTasks(t.db, 1, { status: from });
    const rows = await t.db.query(`UPDATE tasks SET status = $2 WHERE id = $1 RETURNING status`, [
      id,
      to,
    ]);
    expect(rows[0]).toEqual({ status: to });
  });

  it('never changes a terminal row, except to hide it with its thread', async () => {
    const [id] = await insertTasks(t.db, 1, { status: 'completed' });
    await expect(
      t.db.query(`UPDATE tasks SET result = '{"x":1}' WHERE id = $1`, [id]),
    ).rejects.toThrow(/is terminal/);
    await expect(
      t.db.query(`UPDATE tasks SET status = 'failed', error_code = 'x' WHERE id = $1`, [id]),
    ).rejects.toThrow(/is terminal/);
    const hidden = await t.db.query(
      `UPDATE tasks SET thread_deleted_at = now() WHERE id = $1 RETURNING id`,
      [id],
    );
    expect(hidden).toHaveLength(1);
  });
});

describe('the lease table (docs/leases.md, "The lease table")', () => {
  const leaseRows = async (ids: string[]) =>
    t.db.query<{ task_id: string; due: boolean; principal: string; queued: boolean }>(
      `SELECT task_id, next_attempt_at <= now() AS due, principal, queued
         FROM task_leases WHERE task_id = ANY($1::text[])`,
      [ids],
    );

  it('an inserted active task gets its lease row, due now; a terminal one none', async () => {
    const active = await insertTasks(t.db, 2, { status: 'queued', userId: 'u-lease' });
    const done = await insertTasks(t.db, 1, { status: 'completed' });
    expect(await leaseRows(active)).toEqual(
      expect.arrayContaining(
        active.map((id) => ({ task_id: id, due: true, principal: 'u-lease', queued: true })),
      ),
    );
    expect(await leaseRows(done)).toEqual([]);
  });

  it('a task that ends loses its lease row, whichever statement ends it', async () => {
    const ids = await insertTasks(t.db, 3, { status: 'working' });
    await t.db.query(
      `UPDATE tasks SET status = 'failed', error_code = 'x', completed_at = now()
        WHERE id = ANY($1::text[])`,
      [ids.slice(0, 2)],
    );
    expect((await leaseRows(ids)).map((r) => r.task_id)).toEqual([ids[2]]);
  });

  it('a deleted task takes its lease row with it', async () => {
    const [id] = await insertTasks(t.db, 1, { status: 'working' });
    await t.db.query(`DELETE FROM tasks WHERE id = $1`, [id]);
    expect(await leaseRows([id])).toEqual([]);
  });

  it('task_rows has every column of tasks', async () => {
    const missing = await t.db.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'tasks'
       EXCEPT
       SELECT column_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'task_rows'`,
    );
    expect(missing).toEqual([]);
  });
});

describe('claim plan', () => {
  it('reads the partial due index of the lease rows (terminal tasks have none)', async () => {
    await insertTasks(t.db, 5000, { status: 'completed' });
    await insertTasks(t.db, 200, { status: 'working' });
    await t.db.query('ANALYZE task_leases');
    const plan = await t.db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF) ${CLAIM_SQL}`,
      ['w-plan', 50, ['poll'], 30000, 15000, [], [], [], [], 0],
    );
    const text = plan.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toContain('task_leases_due_idx');
    expect(text).not.toMatch(/Seq Scan on tasks\b/);
    await t.db.query(`ROLLBACK`).catch(() => undefined);
  });
});
