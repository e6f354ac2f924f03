import { TaskStatus } from '@app/common';
import type { TaskRow } from '@app/persistence';
import { HeldRequests, type Hold } from './held-requests';

/** A task row reduced to what a hold looks at. */
const row = (status: string, reads = 0): TaskRow => ({ status, reads }) as unknown as TaskRow;
const readsOf = (task: TaskRow): number => (task as unknown as { reads: number }).reads;

/** A hold on a queued task whose re-reads count up, queued until `endsAfter` reads. */
function queuedHold(overrides: Partial<Hold> & { endsAfter?: number } = {}): Hold {
  let reads = 0;
  const endsAfter = overrides.endsAfter ?? Infinity;
  return {
    task: row('queued'),
    waiting: (task) => task.status === TaskStatus.Queued,
    read: () => {
      reads += 1;
      return Promise.resolve(row(reads >= endsAfter ? 'working' : 'queued', reads));
    },
    deadline: Date.now() + 60_000,
    firstCheckMs: 1,
    maxCheckMs: 2,
    ...overrides,
  };
}

describe('HeldRequests', () => {
  it('answers as soon as a re-read finds the task no longer waiting', async () => {
    const held = new HeldRequests();
    const task = await held.hold(queuedHold({ endsAfter: 3 }));
    expect(task.status).toBe('working');
    expect(readsOf(task)).toBe(3);
  });

  it('answers the task as last read when the deadline passes', async () => {
    const held = new HeldRequests();
    const task = await held.hold(queuedHold({ deadline: Date.now() + 30 }));
    expect(task.status).toBe('queued');
  });

  it('answers when a re-read finds the task gone, with what it had', async () => {
    const held = new HeldRequests();
    const hold = queuedHold();
    const task = await held.hold({ ...hold, read: () => Promise.resolve(null) });
    expect(task).toBe(hold.task);
  });

  it('ends every hold in progress when the app closes, with the task as last read', async () => {
    const held = new HeldRequests();
    const hold = queuedHold();
    let twoReads!: () => void;
    const readTwice = new Promise<void>((resolve) => (twoReads = resolve));
    const pending = held.hold({
      ...hold,
      read: async () => {
        const task = (await hold.read())!;
        if (readsOf(task) === 2) twoReads();
        return task;
      },
    });
    // Two re-reads happen first, so the answer is a read row, not the starting one.
    await readTwice;
    held.onModuleDestroy();
    const task = await pending;
    expect(task.status).toBe('queued');
    expect(readsOf(task)).toBeGreaterThanOrEqual(2);
    expect(held.closing).toBe(true);
  });

  it('does not wait at all once the app is closing', async () => {
    const held = new HeldRequests();
    held.onModuleDestroy();
    const read = jest.fn(() => Promise.resolve(row('working')));
    const hold = queuedHold({ read });
    expect(await held.hold(hold)).toBe(hold.task);
    expect(read).not.toHaveBeenCalled();
  });

  it('ends a hold when its caller goes away, and only that one', async () => {
    const held = new HeldRequests();
    const gone = new AbortController();
    const left = held.hold(queuedHold({ abort: gone.signal }));
    const other = held.hold(queuedHold({ endsAfter: 50 }));
    gone.abort();
    expect((await left).status).toBe('queued');
    expect(held.closing).toBe(false);
    expect((await other).status).toBe('working');
  });
});
