// Guards against a 2026-07-28 server's era being guessed wrong, a transient failure being taken
// for "2025-11-25", a change after a redeploy going unnoticed, and ttlMs driving a tight loop.
import type { TaskProtocolVersion } from '@app/config';
import { BackoffPolicy } from '../backoff.policy';
import { MIN_REASK_MS, reaskDelayMs } from '../protocol-era.rules';
import { StatelessSupervisor } from './stateless.supervisor';
import { httpServerConfig } from '../testing/server-config.fixture';
import {
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamRpcError,
  UpstreamUnavailableError,
} from '../upstream.errors';
import type { StatelessSession } from '../upstream.port';

const DISCOVERED = {
  resultType: 'complete',
  supportedVersions: ['2026-07-28'],
  capabilities: { tools: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } },
  ttlMs: 0,
  cacheScope: 'public',
};
const TOOLS = { resultType: 'complete', tools: [{ name: 'ask', inputSchema: { type: 'object' } }] };
const quiet = { info() {}, warn() {}, error() {}, debug() {} };

type Answer = () => Record<string, unknown>;
const refuse =
  (error: Error): Answer =>
  () => {
    throw error;
  };

function sideAnswering(answers: Answer[], pinned = false, latent = false) {
  const asked: string[] = [];
  const eras: TaskProtocolVersion[] = [];
  const published: number[] = [];
  const client: StatelessSession = {
    server: 'up',
    request: (method) => {
      asked.push(method);
      const next = answers.shift();
      return new Promise((resolve) => resolve(next ? next() : TOOLS));
    },
  };
  const side = new StatelessSupervisor({
    config: httpServerConfig({
      connectAttempts: 2,
      ...(pinned ? { protocolVersion: '2026-07-28' as const } : {}),
    }),
    client,
    logger: quiet,
    metrics: {},
    backoff: new BackoffPolicy({ initialMs: 5, maxMs: 5, jitter: 0 }),
    onEra: (era) => eras.push(era),
    onToolsChanged: () => published.push(Date.now()),
    latent,
  });
  return { side, asked, eras, published };
}

describe('StatelessSupervisor', () => {
  it('the extension in server/discover means 2026-07-28: ready with the stateless tools', async () => {
    const { side, asked, eras } = sideAnswering([() => DISCOVERED, () => TOOLS]);
    side.start();
    await expect(side.protocol()).resolves.toBe('2026-07-28');
    expect(asked).toEqual(['server/discover', 'tools/list']);
    expect(side.status()).toMatchObject({ state: 'ready', tools: TOOLS.tools });
    expect(side.status().capabilities).toEqual(DISCOVERED.capabilities);
    expect(eras).toEqual(['2026-07-28']);
    await side.close();
  });

  it('2026-07-28 alone without the extension (no tasks, no sessions) is served here too', async () => {
    const noTasks = { ...DISCOVERED, capabilities: { tools: {} } };
    const { side, eras } = sideAnswering([() => noTasks, () => TOOLS]);
    side.start();
    await expect(side.protocol()).resolves.toBe('2026-07-28');
    expect(side.status()).toMatchObject({ state: 'ready', tools: TOOLS.tools });
    expect(eras).toEqual(['2026-07-28']);
    await side.close();
  });

  it('no extension, a JSON-RPC error, an HTTP 400 or 404 means 2025-11-25: the side rests', async () => {
    const noExtension = {
      ...DISCOVERED,
      supportedVersions: ['2026-07-28', '2025-11-25'],
      capabilities: { tools: {} },
    };
    for (const answer of [
      () => noExtension,
      refuse(new UpstreamRpcError('up', -32601, 'Method not found')),
      refuse(new UpstreamHttpError('up', 400)),
      refuse(new UpstreamHttpError('up', 404)),
    ]) {
      const { side, asked, eras } = sideAnswering([answer]);
      side.start();
      await expect(side.protocol()).resolves.toBe('2025-11-25');
      expect(asked).toEqual(['server/discover']);
      expect(eras).toEqual(['2025-11-25']);
      await side.close();
    }
  });

  it('an unreachable server or a 401 decides nothing: the era stays unknown, then is found', async () => {
    const { side, asked } = sideAnswering([
      refuse(new UpstreamConnectionError('up', 'refused', false)),
      refuse(new UpstreamHttpError('up', 401)),
      () => DISCOVERED,
      () => TOOLS,
    ]);
    side.start();
    // A 401 parks at once (permanent), with no era.
    await expect(side.protocol()).rejects.toBeInstanceOf(UpstreamUnavailableError);
    expect(side.era).toBeUndefined();
    expect(side.status().state).toBe('parked');
    // Work revives a parked side.
    await expect(side.protocol()).resolves.toBe('2026-07-28');
    expect(asked).toEqual(['server/discover', 'server/discover', 'server/discover', 'tools/list']);
    await side.close();
  });

  it('pinned to 2026-07-28: a refused discover is tolerated, tools/list proves health', async () => {
    const { side, asked } = sideAnswering(
      [refuse(new UpstreamRpcError('up', -32601, 'Method not found')), () => TOOLS],
      true,
    );
    side.start();
    // The pin is the era at once; readiness waits for tools/list.
    await expect(side.protocol()).resolves.toBe('2026-07-28');
    await waitFor(() => side.status().state === 'ready');
    await side.close();
    expect(asked).toEqual(['server/discover', 'tools/list']);
    expect(side.status().tools).toEqual(TOOLS.tools);
  });

  it('re-discovery after a redeploy: 2026-07-28 to 2025-11-25 and back', async () => {
    const { side, eras, asked } = sideAnswering([
      () => DISCOVERED,
      () => TOOLS,
      refuse(new UpstreamHttpError('up', 400)), // redeployed as 2025-11-25 only
      () => DISCOVERED, // the one discover asked while 2025-11-25 serves
      () => DISCOVERED, // and the attempt it wakes
      () => TOOLS,
    ]);
    side.start();
    await side.protocol();
    side.rediscover('tools/call refused');
    await waitFor(() => side.era === '2025-11-25');
    side.rediscover('a 2025-11-25 session could not be opened');
    await waitFor(() => side.status().state === 'ready');
    expect(side.era).toBe('2026-07-28');
    expect(eras).toEqual(['2026-07-28', '2025-11-25', '2026-07-28']);
    // While 2026-07-28 serves, a burst of refusals is one re-discovery every 5 s.
    const before = asked.length;
    side.rediscover('tasks/get refused');
    expect(asked).toHaveLength(before);
    await side.close();
  });

  it('latent: a refused session wakes it only for a server that lists no session version', async () => {
    const bothEras = { ...DISCOVERED, supportedVersions: ['2026-07-28', '2025-11-25'] };
    const onlyNew = { ...DISCOVERED, capabilities: { tools: {} } };
    const { side, asked, eras } = sideAnswering(
      [() => bothEras, () => onlyNew, () => onlyNew, () => TOOLS],
      false,
      true,
    );
    // Latent: the session side serves until told otherwise; nothing is asked at start.
    expect(side.era).toBe('2025-11-25');
    await expect(side.protocol()).resolves.toBe('2025-11-25');
    expect(asked).toEqual([]);
    // A server that lists a session version refused the session for another reason: it rests.
    side.rediscover('a 2025-11-25 session could not be opened');
    await waitFor(() => asked.length === 1);
    // The answer is settled within the microtasks that follow it: no timer is needed.
    await new Promise((r) => setImmediate(r));
    expect(side.status().state).not.toBe('ready');
    expect(eras).toEqual([]);
    // One that lists 2026-07-28 alone wakes it: found, with no session version listed.
    side.rediscover('a 2025-11-25 session could not be opened');
    await waitFor(() => side.status().state === 'ready');
    expect(asked).toEqual(['server/discover', 'server/discover', 'server/discover', 'tools/list']);
    expect(eras).toEqual(['2026-07-28']);
    expect(side.listsNoSessionVersion).toBe(true);
    await side.close();
  });

  it('a change in the versions listed is told as the era again (a session may be needed)', async () => {
    const bothEras = { ...DISCOVERED, supportedVersions: ['2026-07-28', '2025-11-25'] };
    const { side, eras } = sideAnswering([() => DISCOVERED, () => TOOLS, () => bothEras]);
    side.start();
    await waitFor(() => side.status().state === 'ready');
    expect(side.listsNoSessionVersion).toBe(true);
    side.rediscover('re-ask');
    await waitFor(() => eras.length === 2);
    expect(eras).toEqual(['2026-07-28', '2026-07-28']);
    expect(side.listsNoSessionVersion).toBe(false);
    await side.close();
  });

  it('a re-ask that finds the same tools publishes nothing; changed tools are published', async () => {
    const more = {
      ...TOOLS,
      tools: [...TOOLS.tools, { name: 'b', inputSchema: { type: 'object' } }],
    };
    const { side, asked, published } = sideAnswering([
      () => DISCOVERED,
      () => TOOLS,
      () => DISCOVERED,
      () => TOOLS,
      () => DISCOVERED,
      () => more,
    ]);
    side.start();
    await side.protocol();
    await waitFor(() => side.status().state === 'ready');
    side.rediscover('re-ask');
    await waitFor(() => asked.length === 4 && !side.status().reason);
    expect(published).toEqual([]);
    const now = Date.now.bind(Date);
    jest.spyOn(Date, 'now').mockImplementation(() => now() + 10_000);
    side.rediscover('re-ask');
    await waitFor(() => published.length === 1);
    expect(side.status().tools).toEqual(more.tools);
    jest.restoreAllMocks();
    await side.close();
  });
});

describe('reaskDelayMs', () => {
  it('follows ttlMs between 5 s and keepaliveIntervalMs', () => {
    const config = { keepaliveIntervalMs: 30_000 };
    expect(reaskDelayMs([0], config)).toBe(MIN_REASK_MS);
    expect(reaskDelayMs([12_000], config)).toBe(12_000);
    expect(reaskDelayMs([3_600_000], config)).toBe(30_000);
    expect(reaskDelayMs([undefined], config)).toBe(30_000);
    expect(reaskDelayMs([0], { keepaliveIntervalMs: 1000 })).toBe(MIN_REASK_MS);
  });
});

async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i += 1) await new Promise((r) => setTimeout(r, 5));
  if (!done()) throw new Error('condition not reached');
}
