import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike, Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ServerConfig } from '@app/config';
import { InvalidUrlError } from '../failure.classifier';
import { ProcessGroupStdioTransport } from './process-group-stdio.transport';
import { retryAfterFetch } from './retry-after';
import { type RequestId, signalIsolatingFetch } from './signal-isolating.fetch';
import type { ProcessGroupRegistry } from './process-group.registry';
import type { UpstreamLogger } from '../upstream.hooks';

/** Builds one fresh transport per connect attempt (connections.md requirement 2). */
export class TransportFactory {
  /** One provider per server, so a token survives reconnects instead of a fetch per attempt. */
  private readonly authProviders = new Map<string, OAuthClientProvider>();

  constructor(
    private readonly registry: ProcessGroupRegistry | undefined,
    private readonly logger: UpstreamLogger,
  ) {}

  /**
   * @param sessionId a stored Streamable HTTP session to reattach to (no initialize).
   * @param onStreamBroken told when an HTTP response stream of a request breaks mid-answer, with
   *   the JSON-RPC IDs of the requests that POST carried.
   */
  create(
    config: ServerConfig,
    sessionId?: string,
    onStreamBroken?: (error: unknown, requestIds: RequestId[]) => void,
  ): Transport {
    if (config.transport === 'stdio') {
      if (!config.command) throw new InvalidUrlError(`server "${config.name}" has no command`);
      return new ProcessGroupStdioTransport(
        {
          command: config.command,
          args: config.args,
          env: config.env,
          cwd: config.cwd,
          maxMessageBytes: config.maxMessageBytes,
          onStderr: (line) => this.logger.debug({ server: config.name, stderr: line }, 'upstream'),
        },
        this.registry,
      );
    }
    const url = parseHttpUrl(config);
    const requestInit: RequestInit = { headers: config.headers };
    const authProvider = this.authProvider(config);
    if (config.transport === 'sse') {
      return new SSEClientTransport(url, {
        requestInit,
        authProvider,
        fetch: upstreamFetch(config, onStreamBroken),
      });
    }
    return new StreamableHTTPClientTransport(url, {
      requestInit,
      authProvider,
      sessionId,
      fetch: upstreamFetch(config, onStreamBroken),
      // The supervisor reconnects; the SDK's own GET-stream retries would race it.
      reconnectionOptions: {
        maxRetries: 0,
        initialReconnectionDelay: 1000,
        maxReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 1,
      },
    });
  }

  private authProvider(config: ServerConfig): OAuthClientProvider | undefined {
    if (!config.oauth) return undefined;
    let provider = this.authProviders.get(config.name);
    if (!provider) {
      // The SDK's client_credentials provider: token fetched on the first 401, kept in memory.
      provider = new ClientCredentialsProvider({
        clientId: config.oauth.clientId,
        clientSecret: config.oauth.clientSecret,
        scope: config.oauth.scope,
        clientName: 'mcp-task-gateway',
      });
      this.authProviders.set(config.name, provider);
    }
    return provider;
  }
}

/**
 * The fetch under one server's SDK transport: the body wrapper that bounds each message and
 * reports a broken answer, over the gateway's HTTP client unless `base` is given
 * (signal-isolating.fetch.ts, http.fetch.ts), with a 429 or 503 with `Retry-After` failing as
 * UpstreamHttpError.
 */
export function upstreamFetch(
  config: Pick<ServerConfig, 'name' | 'maxMessageBytes'>,
  onStreamBroken?: (error: unknown, requestIds: RequestId[]) => void,
  base?: FetchLike,
): FetchLike {
  return retryAfterFetch(
    signalIsolatingFetch(base, onStreamBroken, config.maxMessageBytes),
    config.name,
  );
}

function parseHttpUrl(config: ServerConfig): URL {
  let url: URL;
  try {
    url = new URL(config.url ?? '');
  } catch {
    throw new InvalidUrlError(`server "${config.name}" has an invalid URL`);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw new InvalidUrlError(`server "${config.name}" URL must be http(s) with a host`);
  }
  return url;
}
