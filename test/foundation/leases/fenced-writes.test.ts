// Guards against the lease rules drifting apart again: a second class writing leased task rows
// with its own fence, and the row-by-row and batched terminal writes ending a task differently
// (leases.md, "Fencing"; the rule is written once, in libs/persistence/src/sql/fenced-write.sql.ts,
// and the writes built from it in attempt-write.sql.ts and lease-write.sql.ts).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LeaseLostError, Phase, TaskErrorCode, TaskSnapshot, TaskStatus } from '@app/common';
import { TaskLeaseRepository } from '@app/persistence';
import { createTestDatabase, TestDatabase } from '../../helpers/db';
import { insertTasks } from '../../helpers/tasks';

const ROOT = join(__dirname, '..', '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

const SOURCES = ['apps', 'libs'].flatMap((dir) => sourceFiles(join(ROOT, dir)));
const text = (path: string): string => readFileSync(path, 'utf8');
const rel = (path: string): string => relative(ROOT, path);

describe('one place for the fenced writes of task rows', () => {
  it('only TaskLeaseRepository uses the fence and the terminal SET list', () => {
    const users = SOURCES.filter((path) =>
      /from '\.\/sql\/(fenced-write|attempt-write|lease-write)\.sql'/.test(text(path)),
    ).map(rel);
    expect(users.sort()).toEqual([
      'libs/persistence/src/attempt-values.ts',
      'libs/persistence/src/task-lease.repository.ts',
      'libs/persistence/src/write-path.ts',
    ]);
  });

  it("no other file fences a write on a task's lease row", () => {
    const fencing = SOURCES.filter((path) =>
      /task_leases\.lease_token\s*=\s*(\$\d|[ub]\.token)/.test(text(path)),
    ).map(rel);
    expect(fencing.sort()).toEqual(['libs/persistence/src/sql/fenced-write.sql.ts']);
  });
});

describe('finish row by row and group-committed', () => {
  let t: TestDatabase;
  let leases: TaskLeaseRepository;
  let batched: TaskLeaseRepository;

  beforeAll(async () => {
    t = await createTestDatabase();
    leases = new TaskLeaseRepository(t.db);
    // A window long enough that both writes below go as one batch.
    batched = new TaskLeaseRepository(t.db, { windowMs: 200, maxItems: 2 });
  });
  afterAll(async () => {
    await t.drop();
  });

  const FAILED: TaskSnapshot = {
    status: TaskStatus.Failed,
    error: { code: TaskErrorCode.ProtocolError, message: 'bad answer' },
    progress: { current: 3, total: 4 },
  };
  const COLUMNS = `status, error_code, error_message, progress, poll_count, next_attempt_at,
    lease_token, lease_owner, lease_expires_at, completed_at IS NOT NULL AS completed`;

  it('end a row the same way, and a batch skips a row whose lease was lost', async () => {
    const ids = await insertTasks(t.db, 3, { status: 'working' });
    const claims = await leases.claim({
      workerId: 'w1',
      limit: 3,
      phases: [Phase.Poll],
      leaseMs: 60_000,
      deadWorkerAfterMs: 15_000,
    });
    expect(claims).toHaveLength(3);
    const [one, two, lost] = ids.map((id) => claims.find((c) => c.id === id)!);
    await t.db.query(
      `UPDATE task_leases SET lease_expires_at = now() - interval '1 s' WHERE task_id = $1`,
      [lost.id],
    );

    await leases.finish(one.lease, FAILED);
    const outcomes = await Promise.allSettled([
      batched.finish(two.lease, FAILED),
      batched.finish(lost.lease, FAILED),
    ]);

    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: 'applied' });
    expect(outcomes[1]).toMatchObject({ status: 'rejected', reason: expect.any(LeaseLostError) });
    const row = async (id: string) =>
      (await t.db.query(`SELECT ${COLUMNS} FROM task_rows WHERE id = $1`, [id]))[0];
    const single = await row(one.id);
    expect(single).toMatchObject({
      status: 'failed',
      error_code: 'protocol_error',
      completed: true,
    });
    expect(await row(two.id)).toEqual(single);
    expect((await row(lost.id)).status).toBe('working');
  });
});
