import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { DemoContext } from './demo-context.interface';
import { registerExtraTool, registerMiscTools } from './misc-tools.registrar';
import { registerOrdinaryTools } from './ordinary-tools.registrar';
import { registerSyncTool } from './sync-tool.registrar';
import { registerTaskTools } from './task-tools.registrar';

/**
 * One McpServer per session: the SDK's McpServer drives a single transport, so HTTP builds one
 * for each Mcp-Session-Id while jobs, counters and tasks stay shared in the context.
 */
export function createDemoServer(context: DemoContext): McpServer {
  const server = new McpServer(
    { name: 'mcp-task-gateway-demo-server', version: '0.1.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore: context.taskStore,
      instructions: 'A demo upstream for the MCP Task Gateway: long-running jobs and faults.',
    },
  );
  registerOrdinaryTools(server, context.registry);
  registerTaskTools(server, context.registry, context.push2025);
  registerSyncTool(server, context.registry);
  registerMiscTools(server, context.registry);
  if (context.extraToolAdded) registerExtraTool(server);
  if (context.options.noPing) {
    // With no handler the SDK itself answers -32601 Method not found, as a server without ping would.
    server.server.removeRequestHandler('ping');
  }
  return server;
}
