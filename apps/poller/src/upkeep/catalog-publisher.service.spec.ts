// Guards the catalog publisher's retry (docs/operations.md, "Starting before the database"): a
// publish the database refused is made again until it succeeds; a state that arrives meanwhile
// is published instead of the refused one; close ends the retries at once.
import { Contract, type PublishedToolset } from '@app/common';
import type { McpServersConfig } from '@app/config';
import type { ServerStatus } from '@app/upstream';
import { CatalogPublisherService } from './catalog-publisher.service';

const TOOLS = ['demo_submit', 'demo_status', 'demo_cancel'].map((name) => ({
  name,
  inputSchema: { type: 'object' as const },
}));
const ORDINARY = {
  name: 'jobs',
  server: 'demo',
  contract: Contract.Ordinary,
  retryOnCrash: false,
  submitTool: 'demo_submit',
  statusTool: 'demo_status',
  cancelTool: 'demo_cancel',
};
const READY: ServerStatus = { server: 'demo', state: 'ready', tools: TOOLS };
const PARKED: ServerStatus = { server: 'demo', state: 'parked', reason: 'HTTP 500' };

/** A publisher over a pool whose state the test sets, and a catalog that refuses `failures` publishes. */
function setUp(failures: number) {
  let status = READY;
  let onState!: (server: string, state: string) => void;
  const pool = {
    onToolsChanged: () => undefined,
    onStateChange: (listener: typeof onState) => (onState = listener),
    status: () => status,
  };
  const attempts: boolean[] = [];
  const published: boolean[] = [];
  let refusals = failures;
  const catalog = {
    publish: (entries: PublishedToolset[]): Promise<void> => {
      attempts.push(entries[0].available);
      if (refusals-- > 0) return Promise.reject(new Error('Connection terminated unexpectedly'));
      published.push(entries[0].available);
      return Promise.resolve();
    },
  };
  // What the catalog builder reads of a server: its secrets (none) and its toolsets.
  const server = { name: 'demo', headers: {}, env: {}, toolsets: [ORDINARY] };
  const config = { servers: [server] } as unknown as McpServersConfig;
  const log = { info: () => undefined, warn: () => undefined };
  const service = new CatalogPublisherService(
    config,
    pool as never,
    catalog as never,
    log as never,
  );
  service.subscribe();
  return {
    service,
    attempts,
    published,
    /** The pool's server changes to `next`, as its supervisor says. */
    change(next: ServerStatus) {
      status = next;
      onState(next.server, next.state);
    },
  };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

it('makes a refused publish again, 0.5 s and then 1 s later, until it succeeds', async () => {
  const { change, attempts, published } = setUp(2);
  change(READY);
  await jest.advanceTimersByTimeAsync(0);
  expect(attempts).toEqual([true]);
  await jest.advanceTimersByTimeAsync(500);
  expect(attempts).toEqual([true, true]);
  await jest.advanceTimersByTimeAsync(999);
  expect(published).toEqual([]);
  await jest.advanceTimersByTimeAsync(1);
  expect(published).toEqual([true]);
  await jest.advanceTimersByTimeAsync(60_000);
  expect(attempts).toHaveLength(3);
});

it('publishes the newer state, not the refused one, when the server changed meanwhile', async () => {
  const { change, attempts, published } = setUp(1);
  change(PARKED);
  await jest.advanceTimersByTimeAsync(0);
  change(READY);
  await jest.advanceTimersByTimeAsync(500);
  expect(attempts).toEqual([false, true]);
  expect(published).toEqual([true]);
});

it('stops trying at close, without waiting out the pause', async () => {
  const { service, change, attempts } = setUp(5);
  change(READY);
  await jest.advanceTimersByTimeAsync(0);
  let closed = false;
  void service.close().then(() => (closed = true));
  await jest.advanceTimersByTimeAsync(0);
  expect(closed).toBe(true);
  await jest.advanceTimersByTimeAsync(60_000);
  expect(attempts).toHaveLength(1);
});
