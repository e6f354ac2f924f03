import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ServerNotification } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  DEFAULT_DURATION_MS,
  JobArgs,
  jobArgsShape,
  SYNC_FAULTS,
  SyncFault,
} from './job-args.schema';
import type { JobRecord, JobRegistry } from './job.registry';
import { jobFailMessage, jobResult } from './job-result.util';
import { defineTool, type Tool2026, type ToolCall2026 } from './mcp-2026/tool-2026.types';
import { crashNow, hangUntilAborted, toolError } from './tool-result.util';

/** The brief asks for progress at least every 200 ms; half that leaves room for a slow loop. */
const PROGRESS_EVERY_MS = 100;

/** Resolves true after `ms`, or false as soon as the signal aborts (and then frees the timer). */
function delay(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const DESCRIPTION =
  'Runs a demo job inside the call itself: the answer arrives when the job ends (after ' +
  'duration_ms). Sends progress notifications when the request carries a progressToken ' +
  'and stops at once when the request is cancelled.';

const slowSchema = z.object({
  ...jobArgsShape,
  fault: z
    .enum(SYNC_FAULTS)
    .optional()
    .describe('"crash_call": the server exits half-way; "hang_call": never answers.'),
});

/**
 * The `sync-call` contract: demo_slow holds the request open for the whole job, reports progress
 * when asked to (a progressToken) and stops when the request is cancelled.
 */
export function registerSyncTool(server: McpServer, registry: JobRegistry): void {
  server.registerTool(
    'demo_slow',
    { description: DESCRIPTION, inputSchema: slowSchema.shape },
    async (args, extra): Promise<CallToolResult> => {
      const token = extra._meta?.progressToken;
      return heldCall(registry, args, {
        signal: extra.signal,
        ...(token === undefined ? {} : { progressToken: token }),
        notify: (method, params) =>
          extra.sendNotification({ method, params } as ServerNotification),
      });
    },
  );
}

/**
 * demo_slow on the 2026-07-28 side: task mode `forbidden`, the same job, counters and faults;
 * its first progress notification makes the answer an SSE stream (docs/demo-server.md).
 */
export function syncTools2026(registry: JobRegistry): Tool2026[] {
  return [
    defineTool({
      name: 'demo_slow',
      description: DESCRIPTION,
      mode: 'forbidden',
      schema: slowSchema,
      call: async (args, call) => ({
        kind: 'complete',
        result: await heldCall(registry, args, call),
      }),
    }),
  ];
}

type SlowArgs = JobArgs & { fault?: SyncFault };
/** What a held call needs of its request, in either era. */
type SlowCall = Pick<ToolCall2026, 'signal' | 'progressToken' | 'notify'>;

async function heldCall(
  registry: JobRegistry,
  args: SlowArgs,
  call: SlowCall,
): Promise<CallToolResult> {
  // Concurrency as the upstream sees it: the fleet-wide cap test reads the maximum.
  registry.heldCallStarted();
  try {
    return await runSlow(registry, args, call);
  } finally {
    registry.heldCallEnded();
  }
}

async function runSlow(
  registry: JobRegistry,
  args: SlowArgs,
  call: SlowCall,
): Promise<CallToolResult> {
  registry.count('sync', 'calls');
  registry.countTag(args.tag, 'submits');
  const job = registry.create('sync', args);
  const cancelled = (): Error => {
    registry.endSync(job, 'cancelled');
    registry.countTag(args.tag, 'cancels');
    return new Error('demo_slow was cancelled');
  };
  if (args.fault === 'hang_call') {
    await hangUntilAborted(call.signal).catch(() => {
      throw cancelled();
    });
  }
  const total = args.duration_ms ?? DEFAULT_DURATION_MS;
  const token = call.progressToken;
  const startedAt = Date.now();
  for (let elapsed = 0; ; elapsed = Date.now() - startedAt) {
    if (args.fault === 'crash_call' && elapsed >= total / 2) crashNow('crash_call');
    if (token !== undefined) {
      await call.notify('notifications/progress', {
        progressToken: token,
        progress: Math.min(elapsed, total),
        total,
        message: `${elapsed} of ${total} ms`,
      });
    }
    if (elapsed >= total) break;
    if (!(await delay(Math.min(PROGRESS_EVERY_MS, total - elapsed), call.signal)))
      throw cancelled();
  }
  return finish(registry, job);
}

function finish(registry: JobRegistry, job: JobRecord): CallToolResult {
  if (job.args.outcome === 'fail') {
    registry.endSync(job, 'failed');
    return toolError(jobFailMessage(job.args));
  }
  registry.endSync(job, 'completed');
  const result = jobResult(job.args);
  const text = JSON.stringify(result);
  if (result !== null && typeof result === 'object' && !Array.isArray(result)) {
    return {
      content: [{ type: 'text', text }],
      structuredContent: result as Record<string, unknown>,
    };
  }
  return { content: [{ type: 'text', text }] };
}
