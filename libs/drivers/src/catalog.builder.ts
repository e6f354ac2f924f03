import { Contract, PublishedToolset, defaultMcpExposure } from '@app/common';
import type { ServerConfig, ToolsetConfig } from '@app/config';
import type { ServerStatus } from '@app/upstream';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { taskSupportProblem } from './task-support';

/** Reasons are shown to API consumers: short, and free of URLs and secret values. */
const REASON_MAX_CHARS = 300;
const URL_PATTERN = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi;

const CONTRACT_NOTES: Record<Contract, string> = {
  [Contract.Ordinary]:
    'Runs as a durable gateway task (contract ordinary): submit returns a task at once; poll it for status and result.',
  [Contract.McpTasks]:
    'Runs as a durable gateway task (contract mcp-tasks, native MCP Tasks): submit returns a task at once; poll it for status and result.',
  [Contract.SyncCall]:
    'Runs as a durable gateway task (contract sync-call): a gateway worker holds the call; poll the task for progress and result.',
};

/**
 * Builds the catalog rows of one server's toolsets from its supervisor status (connections.md,
 * requirement 14): each toolset is available, or unavailable with the reason an operator or
 * consumer needs to act on.
 */
export class CatalogBuilder {
  /**
   * @param secrets values that must never appear in a reason (header and env values); see
   *   {@link CatalogBuilder.secretsOf}.
   */
  build(
    toolsets: readonly ToolsetConfig[],
    status: ServerStatus,
    secrets: readonly string[] = [],
  ): PublishedToolset[] {
    return toolsets.map((toolset) => this.entry(toolset, status, secrets));
  }

  /** Convenience: a server's own toolsets, with its configured secret values redacted. */
  buildForServer(server: ServerConfig, status: ServerStatus): PublishedToolset[] {
    return this.build(server.toolsets, status, CatalogBuilder.secretsOf(server));
  }

  /** Header, env and OAuth secret values of a server: text a reason must never carry. */
  static secretsOf(server: ServerConfig): string[] {
    const values = [...Object.values(server.headers), ...Object.values(server.env)];
    if (server.oauth) values.push(server.oauth.clientSecret);
    return values.filter((value) => value.length >= 4);
  }

  private entry(
    toolset: ToolsetConfig,
    status: ServerStatus,
    secrets: readonly string[],
  ): PublishedToolset {
    // ordinary: consumers call the submit tool, so its description and schema are the toolset's.
    const toolName = toolset.contract === Contract.Ordinary ? toolset.submitTool : toolset.tool;
    // A 2026-07-28 server's ordinary and sync-call toolsets run on its 2025-11-25 session side,
    // where it has one running (served without a session, they follow the server's status).
    const side =
      toolset.contract !== Contract.McpTasks && status.sessionSide ? status.sessionSide : status;
    const tool = side.tools?.find((candidate) => candidate.name === toolName);
    let reason = this.unavailableReason(toolset, side, secrets);
    if (reason !== null && side !== status && side.state === 'parked' && status.state === 'ready') {
      // The server serves 2026-07-28 and refused the session: pinned, it needs none
      // (docs/connections.md, "Which side serves").
      reason += `; ${PIN_HINT}`;
    }
    return {
      name: toolset.name,
      server: toolset.server,
      contract: toolset.contract,
      description: describe(tool, toolset.contract),
      inputSchema: (tool?.inputSchema as Record<string, unknown> | undefined) ?? { type: 'object' },
      available: reason === null,
      unavailableReason: reason,
      mcp: toolset.mcp ?? defaultMcpExposure(toolset.name),
      deadlineSeconds: toolset.deadlineSeconds ?? null,
    };
  }

  private unavailableReason(
    toolset: ToolsetConfig,
    status: ServerStatus,
    secrets: readonly string[],
  ): string | null {
    if (status.state !== 'ready' || !status.tools) {
      return `server unavailable: ${sanitize(status.reason ?? status.state, secrets)}`;
    }
    const names =
      toolset.contract === Contract.Ordinary
        ? [toolset.submitTool, toolset.statusTool, toolset.cancelTool, toolset.inputTool]
        : [toolset.tool];
    const missing = names.find(
      (name) => name !== undefined && !status.tools?.some((tool) => tool.name === name),
    );
    if (missing !== undefined) return `tool "${missing}" is not offered by the server`;
    if (toolset.contract === Contract.McpTasks) {
      return taskSupportProblem(
        toolset.tool,
        status.tools,
        status.capabilities,
        status.taskProtocol,
      );
    }
    return null;
  }
}

/** What an operator does about a refused session on a server that serves 2026-07-28. */
const PIN_HINT =
  'the server serves MCP 2026-07-28: pin it ("protocolVersion": "2026-07-28") to run this ' +
  'toolset without a session';

function describe(tool: Tool | undefined, contract: Contract): string {
  const own = tool?.description?.trim();
  return own ? `${own}\n\n${CONTRACT_NOTES[contract]}` : CONTRACT_NOTES[contract];
}

/** Removes URLs (they may carry hosts, paths or tokens) and any configured secret value. */
export function sanitize(reason: string, secrets: readonly string[]): string {
  let text = reason.replace(URL_PATTERN, '<url>');
  for (const secret of secrets) text = text.split(secret).join('<redacted>');
  return text.length > REASON_MAX_CHARS ? `${text.slice(0, REASON_MAX_CHARS)}…` : text;
}
