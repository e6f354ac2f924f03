import { ConfigError, Contract } from '@app/common';
import type { ServerConfig, ToolsetConfig } from './mcp-servers.types';

/** Steps an attempt may chain, each bounded by its own timeout. */
export interface Chain {
  /** Waits for a connection: spawn/open + initialize, at most `connectTimeoutMs` each. */
  connects: number;
  /** Requests, at most `callTimeoutMs` each. */
  calls: number;
}

export type ChainPhase = 'submit' | 'poll' | 'cancel';

const chain = (connects: number, calls: number): Chain => ({ connects, calls });

/**
 * The safety margin an attempt ends before its lease (docs/leases.md, "Attempt deadlines"): a
 * thirtieth of the lease, at least 100 ms and at most 5 s. It leaves the attempt's last fenced
 * write (one round trip, milliseconds) time to land while the lease is still held. The claim's
 * own latency needs no margin: the lease's end is counted from when the claim was sent. A
 * write that still comes too late is refused by the fence, which costs a repeat, never a
 * double write.
 */
export function attemptMarginMs(leaseMs: number): number {
  return Math.min(5000, Math.max(100, Math.round(leaseMs / 30)));
}

/**
 * The longest chain of steps one attempt of `toolset` can take per phase (the table in
 * docs/leases.md, "Attempt deadlines"), or undefined for `sync-call`, whose held call renews its
 * lease instead. Not counted: the retry of an idempotent request after the server forgot the
 * session, and best-effort clean-up (cancelling a task whose ID could not be stored); the attempt
 * deadline cuts them when they do not fit, and the next attempt repeats the request.
 */
export function attemptChains(
  server: Pick<ServerConfig, 'transport' | 'protocolVersion'>,
  toolset: ToolsetConfig,
): Record<ChainPhase, Chain> | undefined {
  switch (toolset.contract) {
    case Contract.SyncCall:
      return undefined;
    case Contract.Ordinary:
      // A poll first delivers stored answers (inputTool), then asks for the status.
      return {
        submit: chain(1, 1),
        poll: chain(1, toolset.inputTool === undefined ? 1 : 2),
        cancel: chain(1, 1),
      };
    case Contract.McpTasks: {
      // 2026-07-28: no session; a poll sends answers (tasks/update) then tasks/get, a cancel
      // tasks/cancel then tasks/get.
      if (server.protocolVersion === '2026-07-28') {
        return { submit: chain(0, 1), poll: chain(0, 2), cancel: chain(0, 2) };
      }
      // 2025-11-25: a poll is tasks/get + tasks/result on the resumed session; a cancel is
      // tasks/cancel + tasks/get (already ended) + tasks/result. Over HTTP a submit waits for the
      // pooled connection and then opens the separate task session: two connects.
      const http = server.transport === 'http';
      // Unpinned over HTTP, the first submit may still have to ask server/discover.
      const discover = http && server.protocolVersion === undefined ? 1 : 0;
      return {
        submit: chain(http ? 2 : 1, 1 + discover),
        poll: chain(1, 2),
        cancel: chain(1, 3),
      };
    }
  }
}

/** What a chain costs at most with the server's timeouts. */
export function chainMs(
  server: Pick<ServerConfig, 'connectTimeoutMs' | 'callTimeoutMs'>,
  c: Chain,
): number {
  return c.connects * server.connectTimeoutMs + c.calls * server.callTimeoutMs;
}

/**
 * Refuses a server whose worst chain, with its connect and call timeouts, cannot end a safety
 * margin before the lease: such an attempt would be cut by its deadline every time instead of
 * by its own timeouts. The message names LEASE_MS, the server, the toolset, the phase and the
 * numbers (docs/leases.md, "Attempt deadlines").
 */
export function checkAttemptChains(server: ServerConfig, leaseMs: number): void {
  const budget = leaseMs - attemptMarginMs(leaseMs);
  for (const toolset of server.toolsets) {
    const chains = attemptChains(server, toolset);
    if (!chains) continue;
    for (const phase of ['submit', 'poll', 'cancel'] as const) {
      const c = chains[phase];
      const ms = chainMs(server, c);
      if (ms <= budget) continue;
      throw new ConfigError(
        `server "${server.name}": LEASE_MS (${leaseMs}) is too short for the ${toolset.contract} ` +
          `${phase} of toolset "${toolset.name}": ${c.connects} × connectTimeoutMs ` +
          `(${server.connectTimeoutMs}) + ${c.calls} × callTimeoutMs (${server.callTimeoutMs}) = ` +
          `${ms} ms must fit in LEASE_MS minus the attempt margin (${attemptMarginMs(leaseMs)} ms); ` +
          'raise LEASE_MS or lower the timeouts (docs/leases.md, "Attempt deadlines")',
      );
    }
  }
}
