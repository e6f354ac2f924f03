/**
 * The toolsets a chaos run exercises, one per (contract, upstream, crash rule) the invariants
 * treat differently. `upstream` names the fault domain: `a` is the HTTP demo server that gets
 * restarted (with its state file), `b` the HTTP one that hangs (SIGSTOP), `stdio` the child each
 * poller spawns.
 */
export interface ChaosToolset {
  name: string;
  server: string;
  upstream: 'a' | 'b' | 'stdio';
  contract: 'ordinary' | 'mcp-tasks' | 'sync-call';
  retryOnCrash: boolean;
  /** Share of the planned tasks. */
  weight: number;
  /**
   * The stored handle is a 2026-07-28 task ID, which the demo server keeps in memory only (its
   * state file has the job behind it, under another ID): the job-to-handle check skips it.
   */
  handleOutsideStateFile?: true;
}

export const CHAOS_TOOLSETS: readonly ChaosToolset[] = [
  {
    name: 'a-ordinary',
    server: 'up-a',
    upstream: 'a',
    contract: 'ordinary',
    retryOnCrash: false,
    weight: 38,
  },
  {
    name: 'a-native',
    server: 'up-a',
    upstream: 'a',
    contract: 'mcp-tasks',
    retryOnCrash: false,
    weight: 14,
  },
  {
    name: 'a-sync',
    server: 'up-a',
    upstream: 'a',
    contract: 'sync-call',
    retryOnCrash: false,
    weight: 9,
  },
  // A raw tool may be bound once per server, so the retryOnCrash twin is a second server entry
  // for the same URL.
  {
    name: 'a-sync-retry',
    server: 'up-a-retry',
    upstream: 'a',
    contract: 'sync-call',
    retryOnCrash: true,
    weight: 5,
  },
  {
    name: 'b-ordinary',
    server: 'up-b',
    upstream: 'b',
    contract: 'ordinary',
    retryOnCrash: false,
    weight: 14,
  },
  {
    name: 's-native',
    server: 'up-stdio',
    upstream: 'stdio',
    contract: 'mcp-tasks',
    retryOnCrash: false,
    weight: 12,
  },
  {
    name: 's-sync',
    server: 'up-stdio',
    upstream: 'stdio',
    contract: 'sync-call',
    retryOnCrash: false,
    weight: 8,
  },
];

/**
 * A native toolset on the 2026-07-28 side of upstream A (the same jobs as `a-native`, reached by
 * discovery instead of a pinned 2025-11-25): the failover run covers both task designs.
 */
export const A_NATIVE_2026: ChaosToolset = {
  name: 'a-native-2026',
  server: 'up-a-2026',
  upstream: 'a',
  contract: 'mcp-tasks',
  retryOnCrash: false,
  weight: 10,
  handleOutsideStateFile: true,
};

/** The toolsets a run plans tasks for: the failover run adds the 2026-07-28 native one. */
export function chaosToolsets(fault: 'all' | 'failover'): readonly ChaosToolset[] {
  return fault === 'failover' ? [...CHAOS_TOOLSETS, A_NATIVE_2026] : CHAOS_TOOLSETS;
}

/** The sync-call toolsets' call deadline (the lease is renewed while the call runs). */
export const HELD_CALL_TIMEOUT_MS = 30_000;

export function toolsetNamed(name: string): ChaosToolset {
  const toolset = CHAOS_TOOLSETS.find((t) => t.name === name);
  if (!toolset) throw new Error(`unknown chaos toolset ${name}`);
  return toolset;
}

/** Raw tool bindings per contract (docs/demo-server.md). */
function binding(toolset: ChaosToolset): Record<string, unknown> {
  const base = {
    name: toolset.name,
    contract: toolset.contract,
    retryOnCrash: toolset.retryOnCrash,
  };
  if (toolset.contract === 'ordinary') {
    return {
      ...base,
      submitTool: 'demo_submit',
      statusTool: 'demo_status',
      cancelTool: 'demo_cancel',
    };
  }
  if (toolset.contract === 'mcp-tasks') return { ...base, tool: 'demo_task_required' };
  // 30 s, not hours: the run must drain. A held call whose HTTP upstream crashes mid-call once
  // waited out this timeout; the connection layer now fails it when its answer stream breaks
  // (docs/chaos.md, "Findings").
  return { ...base, tool: 'demo_slow', callTimeoutMs: HELD_CALL_TIMEOUT_MS };
}

/**
 * The mcpServers file. Timeouts fit the 10 s lease: the longest chain, a native cancel, is one
 * connect and three calls (2 s + 3 × 2.5 s; docs/leases.md, "Attempt deadlines"); sync calls
 * renew their lease instead. The stdio child is this Node binary running the compiled demo server.
 */
export function chaosServersFile(
  urlA: string,
  urlB: string,
  demoMain: string,
  toolsets: readonly ChaosToolset[] = CHAOS_TOOLSETS,
  extra: Record<string, unknown> = {},
): object {
  const entry = (server: string, transport: Record<string, unknown>): Record<string, unknown> => ({
    ...transport,
    ...extra,
    connectTimeoutMs: 2000,
    callTimeoutMs: 2500,
    maxConcurrentCalls: 24,
    taskToolsets: toolsets.filter((t) => t.server === server).map(binding),
  });
  return {
    mcpServers: {
      // demo_task_required lives on the demo server's 2025-11-25 side.
      'up-a': entry('up-a', { url: `${urlA}/mcp`, protocolVersion: '2025-11-25' }),
      'up-a-retry': entry('up-a-retry', { url: `${urlA}/mcp`, protocolVersion: '2025-11-25' }),
      ...(toolsets.includes(A_NATIVE_2026)
        ? // No protocolVersion: discovery finds 2026-07-28, where demo_task_required also lives.
          { 'up-a-2026': entry('up-a-2026', { url: `${urlA}/mcp` }) }
        : {}),
      'up-b': entry('up-b', { url: `${urlB}/mcp`, protocolVersion: '2025-11-25' }),
      'up-stdio': entry('up-stdio', {
        command: process.execPath,
        args: [demoMain, '--transport', 'stdio'],
      }),
    },
  };
}
