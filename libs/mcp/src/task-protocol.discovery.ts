import type { ServerConfig, TaskProtocolVersion } from '@app/config';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { TASKS_EXTENSION } from './stateless-http.client';
import { readToolCatalog } from './tool-catalog.reader';
import { UpstreamHttpError, UpstreamRpcError, UpstreamUnavailableError } from './upstream.errors';
import type { StatelessSession } from './upstream.port';

const LEGACY: TaskProtocolVersion = '2025-11-25';
const STATELESS: TaskProtocolVersion = '2026-07-28';

/**
 * Which task design each server speaks, asked once per server and cached for the life of the
 * pool (docs/connections.md, "MCP 2026-07-28"):
 * - a pinned `protocolVersion` is used as is, and stdio or legacy SSE servers are 2025-11-25;
 * - `server/discover` answered with the tasks extension under `capabilities.extensions` means
 *   2026-07-28 and SEP-2663;
 * - a JSON-RPC error, an HTTP refusal (a 2025-11-25 server wants `initialize` first) or an answer
 *   without the extension means 2025-11-25 and SEP-1686;
 * - a timeout or a lost connection decides nothing: it is thrown, and the next task asks again.
 */
export class TaskProtocolDiscovery {
  private readonly found = new Map<string, TaskProtocolVersion>();
  private readonly statelessTools = new Map<string, Tool[]>();
  private readonly asking = new Map<string, Promise<TaskProtocolVersion>>();

  constructor(
    private readonly clientOf: (server: string) => StatelessSession,
    private readonly onDiscovered: (server: string) => void = () => undefined,
  ) {}

  /** The tools a 2026-07-28 server lists on that side (its `tools/list` there), once read. */
  toolsOf(server: string): Tool[] | undefined {
    return this.statelessTools.get(server);
  }

  /** The version known now, without asking: pinned, implied by the transport, or discovered. */
  known(config: ServerConfig): TaskProtocolVersion | undefined {
    if (config.protocolVersion) return config.protocolVersion;
    if (config.transport !== 'http') return LEGACY;
    return this.found.get(config.name);
  }

  async protocolOf(config: ServerConfig): Promise<TaskProtocolVersion> {
    if (config.protocolVersion === LEGACY || config.transport !== 'http') return LEGACY;
    const known = this.found.get(config.name);
    if (known) return known;
    let asking = this.asking.get(config.name);
    if (!asking) {
      asking = this.discover(config).finally(() => this.asking.delete(config.name));
      this.asking.set(config.name, asking);
    }
    return asking;
  }

  /** A server pinned to 2026-07-28 is not asked which design it speaks, only for its tools. */
  private async discover(config: ServerConfig): Promise<TaskProtocolVersion> {
    const version = config.protocolVersion ?? (await this.ask(config));
    // A server may list other tools to 2026-07-28 requests than to 2025-11-25 sessions.
    if (version === STATELESS) {
      try {
        this.statelessTools.set(config.name, await readToolCatalog(this.clientOf(config.name)));
      } catch (error) {
        throw unavailable(config, 'tools/list', error);
      }
    }
    this.found.set(config.name, version);
    this.onDiscovered(config.name);
    return version;
  }

  private async ask(config: ServerConfig): Promise<TaskProtocolVersion> {
    try {
      const result = await this.clientOf(config.name).request(
        'server/discover',
        {},
        { idempotent: true, timeoutMs: config.connectTimeoutMs },
      );
      return advertisesTasks(result) ? STATELESS : LEGACY;
    } catch (error) {
      if (refused(error)) return LEGACY;
      throw unavailable(config, 'server/discover', error);
    }
  }
}

function unavailable(config: ServerConfig, what: string, error: unknown): UpstreamUnavailableError {
  const why = error instanceof Error ? error.message : String(error);
  return new UpstreamUnavailableError(config.name, 'connecting', `${what}: ${why}`);
}

function advertisesTasks(result: Record<string, unknown>): boolean {
  const capabilities = result.capabilities as { extensions?: Record<string, unknown> } | undefined;
  const versions = result.supportedVersions;
  const speaks = !Array.isArray(versions) || versions.includes(STATELESS);
  return speaks && typeof capabilities?.extensions?.[TASKS_EXTENSION] === 'object';
}

/** The server understood the request and said no: it does not speak 2026-07-28. */
function refused(error: unknown): boolean {
  if (error instanceof UpstreamRpcError) return true;
  // 401/403 says nothing about the protocol: the credentials are wrong.
  const auth = error instanceof UpstreamHttpError && (error.status === 401 || error.status === 403);
  return error instanceof UpstreamHttpError && error.status < 500 && !auth;
}
