import { Contract } from '@app/common';
import { attemptChains, attemptMarginMs, chainMs, checkAttemptChains } from './attempt-chains';
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  type ServerConfig,
  type ToolsetConfig,
} from './mcp-servers.types';

const ordinary: ToolsetConfig = {
  name: 'o',
  server: 's',
  contract: Contract.Ordinary,
  submitTool: 'a',
  statusTool: 'b',
  cancelTool: 'c',
  retryOnCrash: false,
};
const native: ToolsetConfig = {
  name: 'n',
  server: 's',
  contract: Contract.McpTasks,
  tool: 't',
  retryOnCrash: false,
};
const held: ToolsetConfig = {
  name: 'h',
  server: 's',
  contract: Contract.SyncCall,
  tool: 't',
  callTimeoutMs: 3_600_000,
  retryOnCrash: false,
};

function server(overrides: Partial<ServerConfig>, toolsets: ToolsetConfig[]): ServerConfig {
  return {
    name: 's',
    transport: 'http',
    url: 'http://h/mcp',
    args: [],
    env: {},
    headers: {},
    connectTimeoutMs: 1000,
    callTimeoutMs: 1000,
    maxConcurrentCalls: 1,
    keepaliveIntervalMs: 30_000,
    maxMessageBytes: DEFAULT_MAX_MESSAGE_BYTES,
    parkedProbeMs: 300_000,
    connectAttempts: 4,
    sharedState: false,
    toolsets,
    ...overrides,
  };
}

describe('attempt chains (docs/leases.md, "Attempt deadlines")', () => {
  it('counts a native submit over HTTP as two connects and a call, plus discovery unpinned', () => {
    expect(attemptChains({ transport: 'http' }, native)?.submit).toEqual({ connects: 2, calls: 2 });
    expect(
      attemptChains({ transport: 'http', protocolVersion: '2025-11-25' }, native)?.submit,
    ).toEqual({ connects: 2, calls: 1 });
    expect(attemptChains({ transport: 'stdio' }, native)?.submit).toEqual({
      connects: 1,
      calls: 1,
    });
  });

  it('counts a native poll as two calls and a native cancel as three', () => {
    const chains = attemptChains({ transport: 'http' }, native)!;
    expect(chains.poll).toEqual({ connects: 1, calls: 2 });
    expect(chains.cancel).toEqual({ connects: 1, calls: 3 });
  });

  it('adds the answer call to an ordinary poll only when the toolset can take answers', () => {
    expect(attemptChains({ transport: 'http' }, ordinary)?.poll.calls).toBe(1);
    expect(attemptChains({ transport: 'http' }, { ...ordinary, inputTool: 'i' })?.poll.calls).toBe(
      2,
    );
  });

  it('leaves sync-call out: its held call renews the lease', () => {
    expect(attemptChains({ transport: 'http' }, held)).toBeUndefined();
    expect(() =>
      checkAttemptChains(server({ callTimeoutMs: 3_600_000 }, [held]), 3000),
    ).not.toThrow();
  });

  it('prices a chain with the server timeouts', () => {
    expect(
      chainMs({ connectTimeoutMs: 1000, callTimeoutMs: 1900 }, { connects: 2, calls: 1 }),
    ).toBe(3900);
  });

  it('accepts a chain that fits the lease minus the margin exactly, and not one ms more', () => {
    const fits = server({ connectTimeoutMs: 700, callTimeoutMs: 1000 }, [native]); // cancel 3700
    expect(attemptMarginMs(3828)).toBe(128); // budget 3700
    expect(() => checkAttemptChains(fits, 3828)).not.toThrow();
    expect(() => checkAttemptChains(fits, 3827)).toThrow(/mcp-tasks cancel of toolset "n"/);
    expect(() => checkAttemptChains(fits, 3827)).toThrow(/^server "s": LEASE_MS \(3827\)/);
  });
});
