import { CoalescedNotify } from './coalesced-notify';
import { Queryable } from './database';

/** A Queryable whose statements wait until the spec answers them, in order. */
class HeldQueries implements Queryable {
  readonly sent: { sql: string; params: unknown[] }[] = [];
  private readonly answers: { resolve: () => void; reject: (error: Error) => void }[] = [];

  query<R>(sql: string, params: unknown[] = []): Promise<R[]> {
    this.sent.push({ sql, params });
    return new Promise<R[]>((resolve, reject) => {
      this.answers.push({ resolve: () => resolve([]), reject });
    });
  }

  /** Answers the oldest open statement, then lets the notifier go on. */
  async answer(error?: Error): Promise<void> {
    const next = this.answers.shift();
    if (!next) throw new Error('no statement in flight');
    if (error) next.reject(error);
    else next.resolve();
    // Every microtask runs before the next macrotask: the notifier's continuation has run.
    await new Promise((resolve) => setImmediate(resolve));
  }

  get open(): number {
    return this.answers.length;
  }
}

describe('CoalescedNotify', () => {
  it('sends at once, and one more for every burst that came while one was in flight', async () => {
    const db = new HeldQueries();
    const notify = new CoalescedNotify(db, 'mcp_tasks_due', 'submit', () => undefined);
    notify.send();
    expect(db.sent).toEqual([
      { sql: 'SELECT pg_notify($1, $2)', params: ['mcp_tasks_due', 'submit'] },
    ]);
    // Ten writes commit while the first NOTIFY is in flight: they share the next one.
    for (let i = 0; i < 10; i++) notify.send();
    expect(db.sent).toHaveLength(1);
    await db.answer();
    expect(db.sent).toHaveLength(2);
    expect(db.open).toBe(1);
    // Nothing came meanwhile: the second one ends the run.
    await db.answer();
    expect(db.sent).toHaveLength(2);
    expect(db.open).toBe(0);
  });

  it('every send is followed by a NOTIFY sent after it', async () => {
    const db = new HeldQueries();
    const notify = new CoalescedNotify(db, 'c', 'p', () => undefined);
    notify.send();
    await db.answer();
    // The first run is over: a later send starts a new one rather than being absorbed.
    notify.send();
    expect(db.sent).toHaveLength(2);
    notify.send();
    await db.answer();
    expect(db.sent).toHaveLength(3);
    await db.answer();
    expect(db.open).toBe(0);
  });

  it('reports a failed NOTIFY and goes on with the next', async () => {
    const db = new HeldQueries();
    const errors: unknown[] = [];
    const notify = new CoalescedNotify(db, 'c', 'p', (error) => errors.push(error));
    notify.send();
    notify.send();
    const failure = new Error('connection terminated');
    await db.answer(failure);
    expect(errors).toEqual([failure]);
    expect(db.sent).toHaveLength(2);
    await db.answer();
    notify.send();
    expect(db.sent).toHaveLength(3);
    await db.answer();
    expect(errors).toHaveLength(1);
  });
});

describe('CoalescedNotify with a least gap between NOTIFYs', () => {
  beforeEach(() =>
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }),
  );
  afterEach(() => jest.useRealTimers());

  it('sends after a quiet spell at once, and a stream at most once per gap', async () => {
    const db = new HeldQueries();
    const notify = new CoalescedNotify(db, 'c', 'p', () => undefined, 20);
    notify.send();
    expect(db.sent).toHaveLength(1);
    await db.answer();
    // Answered 0 ms after it was sent: writes now wait out the rest of the gap, together.
    notify.send();
    notify.send();
    await jest.advanceTimersByTimeAsync(19);
    expect(db.sent).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(db.sent).toHaveLength(2);
    await db.answer();
    expect(db.open).toBe(0);
    // A write a whole gap after the last NOTIFY is sent at once.
    await jest.advanceTimersByTimeAsync(20);
    notify.send();
    expect(db.sent).toHaveLength(3);
    await db.answer();
  });

  it('a write that comes while the next NOTIFY waits out its gap is announced by it', async () => {
    const db = new HeldQueries();
    const notify = new CoalescedNotify(db, 'c', 'p', () => undefined, 20);
    notify.send();
    await jest.advanceTimersByTimeAsync(5);
    notify.send();
    await db.answer();
    await jest.advanceTimersByTimeAsync(10);
    notify.send();
    await jest.advanceTimersByTimeAsync(5);
    expect(db.sent).toHaveLength(2);
    await db.answer();
    expect(db.open).toBe(0);
    expect(db.sent).toHaveLength(2);
  });
});
