// Guards the engine's timing: it claims only into free slots, wakes at the earliest due time it knows (not just the fallback), claims again after the gap when a concurrent claim held its rows, backs off on claim errors, keys items by claim, and drains under a deadline.
import { ClaimedBatch, LeasedWork } from './leased-work';
import { LeasedWorkEngine } from './leased-work.engine';
import { SlotCount } from './slot-count';

interface Item {
  token: string;
  taskId: string;
}

/** A scripted source: rows waiting in `due`, runs that settle when the test says so. */
class ScriptedWork implements LeasedWork<Item> {
  due: Item[] = [];
  /** Flags the next claims report, one per claim. */
  flags: Array<{ again?: boolean; leftBehind?: boolean; contended?: boolean }> = [];
  readonly givenBack: string[] = [];
  earliest: number | null = null;
  /** The `sinceClaimMs` of each earliest-due read. */
  readonly earliestAsked: number[] = [];
  /** How long each claim statement takes (fake time). */
  claimMs = 0;
  failures = 0;
  readonly claims: Array<{ at: number; limit: number }> = [];
  readonly runs = new Map<string, (nextDueInMs?: number) => void>();
  readonly signals = new Map<string, AbortSignal>();

  async claim(limit: number): Promise<ClaimedBatch<Item>> {
    this.claims.push({ at: Date.now(), limit });
    if (this.claimMs > 0) await new Promise((resolve) => setTimeout(resolve, this.claimMs));
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('database down');
    }
    return { items: this.due.splice(0, limit), ...this.flags.shift() };
  }

  giveBack(item: Item): Promise<void> {
    this.givenBack.push(item.token);
    return Promise.resolve();
  }

  earliestDueMs(sinceClaimMs: number): Promise<number | null> {
    this.earliestAsked.push(sinceClaimMs);
    return Promise.resolve(this.earliest);
  }

  key(item: Item): string {
    return item.token;
  }

  run(item: Item, controller: AbortController): Promise<number | undefined> {
    this.signals.set(item.token, controller.signal);
    return new Promise((resolve) => this.runs.set(item.token, resolve));
  }

  /** Settles the run of `token`, its row due again in `nextDueInMs`. */
  settle(token: string, nextDueInMs?: number): void {
    this.runs.get(token)!(nextDueInMs);
    this.runs.delete(token);
  }
}

const item = (n: number, taskId = `task-${n}`): Item => ({ token: `lease-${n}`, taskId });
const quiet = { warn: () => undefined };
let engine: LeasedWorkEngine<Item> | undefined;

function start(work: ScriptedWork, slots: number, fallbackIntervalMs = 60_000, minClaimGapMs = 0) {
  engine = new LeasedWorkEngine({
    name: 'test',
    work,
    capacity: new SlotCount(slots),
    fallbackIntervalMs,
    minClaimGapMs,
    log: quiet,
  });
  engine.start();
  return engine;
}

beforeEach(() => jest.useFakeTimers());
afterEach(async () => {
  const stopping = engine?.stopClaiming();
  await jest.advanceTimersByTimeAsync(0);
  await stopping;
  engine = undefined;
  jest.useRealTimers();
});

it('claims no more than its free slots, and claims again as soon as a slot frees', async () => {
  const work = new ScriptedWork();
  work.due = [item(1), item(2), item(3)];
  const run = start(work, 2);
  await jest.advanceTimersByTimeAsync(0);
  expect(work.claims.map((c) => c.limit)).toEqual([2]);
  expect(run.inFlight().map((i) => i.token)).toEqual(['lease-1', 'lease-2']);
  // The claim was full, so rows may be waiting: a freed slot is filled at once.
  work.settle('lease-1', 5000);
  await jest.advanceTimersByTimeAsync(0);
  expect(work.claims.map((c) => c.limit)).toEqual([2, 1]);
  expect(run.inFlight().map((i) => i.token)).toEqual(['lease-2', 'lease-3']);
});

it('wakes at the earliest due time the database reports (a lease expiry), not the fallback', async () => {
  const work = new ScriptedWork();
  work.earliest = 3000;
  start(work, 4, 60_000);
  await jest.advanceTimersByTimeAsync(0);
  expect(work.claims).toHaveLength(1);
  work.earliest = null;
  await jest.advanceTimersByTimeAsync(2999);
  expect(work.claims).toHaveLength(1);
  await jest.advanceTimersByTimeAsync(1);
  expect(work.claims).toHaveLength(2);
});

it('asks for the earliest due time from when its claim began, so rows due during a slow claim count', async () => {
  const work = new ScriptedWork();
  work.claimMs = 400;
  work.earliest = 3000;
  start(work, 4, 60_000);
  await jest.advanceTimersByTimeAsync(400);
  expect(work.earliestAsked).toEqual([400]);
  // The next claim, at the due time it was given, asks from its own start.
  work.claimMs = 0;
  await jest.advanceTimersByTimeAsync(3000);
  expect(work.claims).toHaveLength(2);
  expect(work.earliestAsked).toEqual([400, 0]);
});

it("wakes at a settled item's next due time while nothing else is known", async () => {
  const work = new ScriptedWork();
  work.due = [item(1)];
  start(work, 4, 60_000);
  await jest.advanceTimersByTimeAsync(0);
  expect(work.claims).toHaveLength(1);
  work.settle('lease-1', 500);
  await jest.advanceTimersByTimeAsync(499);
  expect(work.claims).toHaveLength(1);
  await jest.advanceTimersByTimeAsync(1);
  expect(work.claims).toHaveLength(2);
});

it('claims again at once when the source says more may be due, and on a freed slot when it left rows behind', async () => {
  const work = new ScriptedWork();
  work.due = [item(1)];
  work.flags = [{ again: true }, { leftBehind: true }];
  start(work, 4, 60_000);
  await jest.advanceTimersByTimeAsync(0);
  // The first claim filled a part of the room: a second claim follows without a wake-up.
  expect(work.claims).toHaveLength(2);
  await jest.advanceTimersByTimeAsync(10_000);
  expect(work.claims).toHaveLength(2);
  // The second left rows behind: a freed slot claims at once, though the row is due later.
  work.settle('lease-1', 30_000);
  await jest.advanceTimersByTimeAsync(0);
  expect(work.claims).toHaveLength(3);
});

it('gathers wake-ups within the claim gap into one claim at its end, but claims a backlog at once', async () => {
  const work = new ScriptedWork();
  work.due = [item(1)];
  const run = start(work, 8, 60_000, 20);
  await jest.advanceTimersByTimeAsync(0);
  expect(work.claims).toHaveLength(1);
  // Three rows fall due one by one within the gap (a NOTIFY, a due time, a settled item).
  work.due.push(item(2));
  run.poke();
  await jest.advanceTimersByTimeAsync(5);
  work.due.push(item(3));
  work.settle('lease-1', 0);
  await jest.advanceTimersByTimeAsync(5);
  work.due.push(item(4));
  run.poke();
  await jest.advanceTimersByTimeAsync(9);
  expect(work.claims).toHaveLength(1);
  await jest.advanceTimersByTimeAsync(1);
  expect(work.claims.map((c) => c.at)).toEqual([work.claims[0].at, work.claims[0].at + 20]);
  expect(run.inFlight().map((i) => i.token)).toEqual(['lease-2', 'lease-3', 'lease-4']);
  // A full claim (rows left behind): a slot freed right after it is filled at once, without
  // waiting out the gap.
  work.due = [5, 6, 7, 8, 9, 10, 11].map((n) => item(n));
  run.poke();
  await jest.advanceTimersByTimeAsync(20);
  expect(work.claims.map((c) => c.limit)).toEqual([8, 8, 5]);
  work.settle('lease-5', 30_000);
  await jest.advanceTimersByTimeAsync(0);
  expect(work.claims.map((c) => c.limit)).toEqual([8, 8, 5, 1]);
  expect(work.claims[3].at).toBe(work.claims[2].at);
});

it('claims again once the gap has passed when a concurrent claim held its rows, a bounded number of times', async () => {
  const work = new ScriptedWork();
  // Nothing known to be due, so without the flag the engine would wait for the fallback.
  work.flags = [{ contended: true }];
  const run = start(work, 4, 60_000, 20);
  await jest.advanceTimersByTimeAsync(0);
  expect(work.claims).toHaveLength(1);
  // The other claim committed and left a row due: the retry takes it at the gap's end, not at once.
  work.due = [item(1)];
  await jest.advanceTimersByTimeAsync(19);
  expect(work.claims).toHaveLength(1);
  await jest.advanceTimersByTimeAsync(1);
  expect(work.claims.map((c) => c.at - work.claims[0].at)).toEqual([0, 20]);
  expect(run.inFlight().map((i) => i.token)).toEqual(['lease-1']);
  // Without the flag a short claim waits for a wake-up again.
  await jest.advanceTimersByTimeAsync(10_000);
  expect(work.claims).toHaveLength(2);
  // A lock held for long: five retries, then the engine waits as after any short claim.
  work.flags = Array.from({ length: 10 }, () => ({ contended: true }));
  run.poke();
  await jest.advanceTimersByTimeAsync(10_000);
  expect(work.claims).toHaveLength(2 + 1 + 5);
});

it('gives back a claimed row its capacity rule refuses, and never runs it', async () => {
  const work = new ScriptedWork();
  work.due = [item(1), item(2)];
  const refusing = {
    claimable: () => 2,
    acquire: (i: Item) => i.token !== 'lease-2',
    release: () => undefined,
  };
  engine = new LeasedWorkEngine({
    name: 'test',
    work,
    capacity: refusing,
    fallbackIntervalMs: 60_000,
    log: quiet,
  });
  engine.start();
  await jest.advanceTimersByTimeAsync(0);
  expect(engine.inFlight().map((i) => i.token)).toEqual(['lease-1']);
  expect(work.givenBack).toEqual(['lease-2']);
});

it('falls back to the fallback interval when no due time is known', async () => {
  const work = new ScriptedWork();
  start(work, 4, 1000);
  await jest.advanceTimersByTimeAsync(0);
  await jest.advanceTimersByTimeAsync(999);
  expect(work.claims).toHaveLength(1);
  await jest.advanceTimersByTimeAsync(1);
  expect(work.claims).toHaveLength(2);
});

it('a poke during a claim statement is not lost', async () => {
  const work = new ScriptedWork();
  const run = start(work, 4, 60_000);
  run.poke(); // the first claim has been issued, not yet answered
  await jest.advanceTimersByTimeAsync(0);
  expect(work.claims).toHaveLength(2);
});

it('backs off on claim errors from 250 ms, pokes do not shorten it, a success resets it', async () => {
  const work = new ScriptedWork();
  work.failures = 3;
  const run = start(work, 4, 60_000);
  const t0 = Date.now();
  await jest.advanceTimersByTimeAsync(0);
  run.poke();
  await jest.advanceTimersByTimeAsync(2000);
  expect(work.claims.map((c) => c.at - t0)).toEqual([0, 250, 750, 1750]);
  work.failures = 1;
  run.poke();
  await jest.advanceTimersByTimeAsync(250);
  expect(work.claims.map((c) => c.at - t0)).toEqual([0, 250, 750, 1750, 2000, 2250]);
});

it('keys items by claim: the same task claimed again under a new lease is another item', async () => {
  const work = new ScriptedWork();
  work.due = [item(1, 'task-x'), item(2, 'task-x')];
  const run = start(work, 4);
  await jest.advanceTimersByTimeAsync(0);
  expect(run.inFlight().map((i) => i.token)).toEqual(['lease-1', 'lease-2']);
  work.settle('lease-1');
  await jest.advanceTimersByTimeAsync(0);
  expect(run.inFlight().map((i) => i.token)).toEqual(['lease-2']);
});

it('stops claiming at once, drains under a deadline, and aborts only what it is told to', async () => {
  const work = new ScriptedWork();
  work.due = [item(1), item(2)];
  const run = start(work, 4);
  await jest.advanceTimersByTimeAsync(0);
  const stopping = run.stopClaiming();
  await jest.advanceTimersByTimeAsync(0);
  await stopping;
  expect(run.isClaiming).toBe(false);
  work.due = [item(3)];
  let drained: boolean | undefined;
  void run.drain(Date.now() + 1000).then((value) => (drained = value));
  work.settle('lease-1');
  await jest.advanceTimersByTimeAsync(999);
  expect(drained).toBeUndefined();
  await jest.advanceTimersByTimeAsync(1);
  expect(drained).toBe(false);
  run.abort((i) => i.token === 'lease-2', new Error('shutdown'));
  expect(work.signals.get('lease-2')!.aborted).toBe(true);
  expect(work.signals.get('lease-1')!.aborted).toBe(false);
  const all = run.drain(Infinity);
  work.settle('lease-2');
  await expect(all).resolves.toBe(true);
  await jest.advanceTimersByTimeAsync(120_000);
  expect(work.claims).toHaveLength(1);
});
