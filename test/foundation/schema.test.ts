// Guards the schema's own rules: illegal transitions and changes to terminal rows are refused by
// the database, and the claim uses the partial index instead of scanning terminal rows.
import { CLAIM_SQL } from '@app/persistence';
import { useTestDatabase } from '../helpers/db';
import { insertTasks } from '../helpers/tasks';

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
      `UPDATE tasks SET status = 'completed', next_attempt_at = NULL, completed_at = now()
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

  it('keeps the due time NULL exactly for terminal rows', async () => {
    const [id] = await insertTasks(t.db, 1, { status: 'working' });
    await expect(
      t.db.query(`UPDATE tasks SET status = 'completed' WHERE id = $1`, [id]),
    ).rejects.toThrow(/tasks_due_iff_active/);
  });
});

describe('claim plan', () => {
  it('reads the partial due index and never visits terminal rows', async () => {
    await insertTasks(t.db, 5000, { status: 'completed' });
    await insertTasks(t.db, 200, { status: 'working' });
    await t.db.query('ANALYZE tasks');
    const plan = await t.db.query<{ 'QUERY PLAN': string }>(
      `EXPLAIN (ANALYZE, COSTS OFF) ${CLAIM_SQL}`,
      ['w-plan', 50, ['poll'], 30000, 15000, [], [], []],
    );
    const text = plan.map((row) => row['QUERY PLAN']).join('\n');
    expect(text).toContain('tasks_due_idx');
    expect(text).not.toMatch(/Seq Scan on tasks/);
    await t.db.query(`ROLLBACK`).catch(() => undefined);
  });
});
