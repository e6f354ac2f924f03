import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
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

/**
 * The `sync-call` contract: demo_slow holds the request open for the whole job, reports progress
 * when asked to (a progressToken) and stops when the request is cancelled.
 */
export function registerSyncTool(server: McpServer, registry: JobRegistry): void {
  server.registerTool(
    'demo_slow',
    {
      description:
        'Runs a demo job inside the call itself: the answer arrives when the job ends (after ' +
        'duration_ms). Sends progress notifications when the request carries a progressToken ' +
        'and stops at once when the request is cancelled.',
      inputSchema: {
        ...jobArgsShape,
        fault: z
          .enum(SYNC_FAULTS)
          .optional()
          .describe('"crash_call": the server exits half-way; "hang_call": never answers.'),
      },
    },
    async (args, extra): Promise<CallToolResult> => {
      // Concurrency as the upstream sees it: the fleet-wide cap test reads the maximum.
      registry.heldCallStarted();
      try {
        return await runSlow(registry, args, extra);
      } finally {
        registry.heldCallEnded();
      }
    },
  );
}

type SlowArgs = JobArgs & { fault?: SyncFault };
type SlowExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

async function runSlow(
  registry: JobRegistry,
  args: SlowArgs,
  extra: SlowExtra,
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
    await hangUntilAborted(extra.signal).catch(() => {
      throw cancelled();
    });
  }
  const total = args.duration_ms ?? DEFAULT_DURATION_MS;
  const token = extra._meta?.progressToken;
  const startedAt = Date.now();
  for (let elapsed = 0; ; elapsed = Date.now() - startedAt) {
    if (args.fault === 'crash_call' && elapsed >= total / 2) crashNow('crash_call');
    if (token !== undefined) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: Math.min(elapsed, total),
          total,
          message: `${elapsed} of ${total} ms`,
        },
      });
    }
    if (elapsed >= total) break;
    if (!(await delay(Math.min(PROGRESS_EVERY_MS, total - elapsed), extra.signal)))
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
