import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { JobRegistry } from './job.registry';
import { structuredResult } from './tool-result.util';

export const EXTRA_TOOL_NAME = 'demo_extra';

/** demo_echo (a fast tool without task support) and demo_stats (the counters tests assert on). */
export function registerMiscTools(server: McpServer, registry: JobRegistry): void {
  server.registerTool(
    'demo_echo',
    {
      description: 'Returns the given text at once. A fast plain tool with no task support.',
      inputSchema: { text: z.string().describe('The text to send back.') },
    },
    async ({ text }) => ({ content: [{ type: 'text', text }], structuredContent: { text } }),
  );

  server.registerTool(
    'demo_stats',
    {
      description:
        'Counts what this server has seen: submits, status calls and cancels per contract, ' +
        'jobs still running (live_jobs), and per tag how often it was submitted and cancelled ' +
        'and the state of its latest job. Lets tests prove a job was submitted at most once.',
      inputSchema: {
        tag: z.string().min(1).optional().describe('Only report this tag under by_tag.'),
      },
    },
    async ({ tag }) => structuredResult(registry.stats(tag)),
  );
}

/**
 * demo_extra appears only after POST /admin/add-tool, so a client can test catalog refresh.
 * Registering on a connected McpServer makes the SDK send notifications/tools/list_changed.
 */
export function registerExtraTool(server: McpServer): void {
  server.registerTool(
    EXTRA_TOOL_NAME,
    {
      description: 'A trivial tool added at run time (POST /admin/add-tool). Answers "extra".',
      inputSchema: {},
    },
    async () => ({ content: [{ type: 'text', text: 'extra' }] }),
  );
}
