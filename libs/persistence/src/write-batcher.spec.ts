import { WriteBatcher } from './write-batcher';

/** A `send` that records each batch and answers every item doubled, or fails when told to. */
function recorder(fail?: Error) {
  const batches: number[][] = [];
  const send = (items: number[]): Promise<number[]> => {
    batches.push(items);
    return fail ? Promise.reject(fail) : Promise.resolve(items.map((n) => n * 2));
  };
  return { batches, send };
}

describe('WriteBatcher', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends the writes of one window as one batch, each caller getting its own result', async () => {
    const { batches, send } = recorder();
    const batcher = new WriteBatcher(send, { windowMs: 3, maxItems: 100 });
    const results = [batcher.submit(1), batcher.submit(2), batcher.submit(3)];

    jest.advanceTimersByTime(2);
    expect(batches).toEqual([]);
    jest.advanceTimersByTime(1);

    await expect(Promise.all(results)).resolves.toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('a write queued after a batch left opens a window of its own', async () => {
    const { batches, send } = recorder();
    const batcher = new WriteBatcher(send, { windowMs: 3, maxItems: 100 });
    const first = batcher.submit(1);
    jest.advanceTimersByTime(3);
    const second = batcher.submit(2);
    jest.advanceTimersByTime(3);

    await expect(Promise.all([first, second])).resolves.toEqual([2, 4]);
    expect(batches).toEqual([[1], [2]]);
  });

  it('sends a full batch at once, without waiting out the window', async () => {
    const { batches, send } = recorder();
    const batcher = new WriteBatcher(send, { windowMs: 1000, maxItems: 2 });
    const full = [batcher.submit(1), batcher.submit(2)];

    await expect(Promise.all(full)).resolves.toEqual([2, 4]);
    expect(batches).toEqual([[1, 2]]);
    const rest = batcher.submit(3);
    expect(batcher.pending).toBe(1);
    jest.advanceTimersByTime(1000);
    await expect(rest).resolves.toBe(6);
  });

  it('a window of 0 sends every write alone', async () => {
    const { batches, send } = recorder();
    const batcher = new WriteBatcher(send, { windowMs: 0, maxItems: 100 });

    await expect(Promise.all([batcher.submit(1), batcher.submit(2)])).resolves.toEqual([2, 4]);
    expect(batches).toEqual([[1], [2]]);
  });

  it('a batch the database refused is sent again row by row: one bad row fails only itself', async () => {
    const batches: number[][] = [];
    const refused = Object.assign(new Error('invalid input syntax for type json'), {
      code: '22P02',
    });
    const batcher = new WriteBatcher(
      (items: number[]) => {
        batches.push(items);
        return items.includes(13) ? Promise.reject(refused) : Promise.resolve(items.map(String));
      },
      { windowMs: 3, maxItems: 100 },
    );
    const results = [12, 13, 14].map((n) => batcher.submit(n).catch((e: unknown) => e));
    jest.advanceTimersByTime(3);

    expect(await Promise.all(results)).toEqual(['12', refused, '14']);
    expect(batches).toEqual([[12, 13, 14], [12], [13], [14]]);
  });

  it("a batch whose connection broke fails every write in it with the statement's error", async () => {
    const broken = new Error('Connection terminated unexpectedly');
    const { send } = recorder(broken);
    const batcher = new WriteBatcher(send, { windowMs: 3, maxItems: 100 });
    const results = [batcher.submit(1), batcher.submit(2)].map((p) => p.catch((e: unknown) => e));
    jest.advanceTimersByTime(3);

    expect(await Promise.all(results)).toEqual([broken, broken]);
  });

  it('a send that answers the wrong number of results fails the batch, never mismatches', async () => {
    const batcher = new WriteBatcher((items: number[]) => Promise.resolve(items.slice(1)), {
      windowMs: 3,
      maxItems: 100,
    });
    const results = [batcher.submit(1), batcher.submit(2)].map((p) => p.catch((e: unknown) => e));
    jest.advanceTimersByTime(3);

    for (const result of await Promise.all(results)) expect(result).toBeInstanceOf(Error);
  });

  it('flush sends what is queued without waiting for the window and waits for it to land', async () => {
    let land: (() => void) | undefined;
    const batches: number[][] = [];
    const batcher = new WriteBatcher(
      (items: number[]) => {
        batches.push(items);
        return new Promise<number[]>((resolve) => {
          land = () => resolve(items);
        });
      },
      { windowMs: 60_000, maxItems: 100 },
    );
    const write = batcher.submit(7);
    let flushed = false;
    const flushing = batcher.flush().then(() => {
      flushed = true;
    });

    expect(batches).toEqual([[7]]);
    await Promise.resolve();
    expect(flushed).toBe(false);
    land!();
    await flushing;
    expect(flushed).toBe(true);
    await expect(write).resolves.toBe(7);
    expect(jest.getTimerCount()).toBe(0);
  });
});
