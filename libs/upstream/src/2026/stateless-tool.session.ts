import {
  CallToolResultSchema,
  type CallToolResult,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { STATELESS_ERA } from '../protocol-era.rules';
import { UpstreamProtocolError } from '../upstream.errors';
import type {
  RequestOptions,
  StatelessRequestOptions,
  StatelessSession,
  UpstreamSession,
} from '../upstream.port';

/**
 * The session of a server served without one: pinned to 2026-07-28, or found to refuse sessions
 * (docs/connections.md, "Which side serves"). Its `ordinary` and `sync-call` tools are called with stateless `tools/call` requests
 * that leave the tasks extension out of the declared capabilities, so the server answers with the
 * result and never makes a task. The answer is checked against the same schema the session side's
 * SDK checks it with. Progress comes as it does on a session: `notifications/progress` for the
 * request's progress token, on the answer's SSE stream.
 */
export class StatelessToolSession implements UpstreamSession {
  readonly sessionId = undefined;
  readonly protocolVersion = STATELESS_ERA;

  constructor(
    private readonly client: StatelessSession,
    private readonly capabilitiesNow: () => ServerCapabilities | undefined,
  ) {}

  get server(): string {
    return this.client.server;
  }

  get capabilities(): ServerCapabilities | undefined {
    return this.capabilitiesNow();
  }

  async callTool(
    name: string,
    args: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<CallToolResult> {
    const reply = await this.client.request(
      'tools/call',
      { name, arguments: args },
      { ...options, name, withoutTasks: true },
    );
    const { resultType, ...result } = reply;
    if (resultType !== undefined && resultType !== 'complete') {
      throw new UpstreamProtocolError(
        this.server,
        `tools/call of "${name}" answered resultType ${JSON.stringify(resultType)} to a client ` +
          'without the tasks extension; only a result can end this call',
      );
    }
    const parsed = CallToolResultSchema.safeParse(result);
    if (!parsed.success) {
      throw new UpstreamProtocolError(
        this.server,
        `tools/call of "${name}": ${parsed.error.message}`,
      );
    }
    return parsed.data;
  }

  request(
    method: string,
    params: Record<string, unknown>,
    options: StatelessRequestOptions,
  ): Promise<unknown> {
    return this.client.request(method, params, options);
  }
}
