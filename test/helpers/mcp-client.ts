// MCP SDK clients of the API's front door (`/mcp`), for the tests that speak MCP to the gateway.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';

/**
 * An MCP SDK client connected to `/mcp` of `apiUrl` with a bearer key. By default it declares
 * the tasks capability; `capabilities` replaces that (`{}` for a plain client), and `fetch`
 * sees every HTTP request it makes (to record what it sent).
 */
export async function sdkClient(
  apiUrl: string,
  key: string,
  query = '',
  options: { capabilities?: ClientCapabilities; fetch?: FetchLike } = {},
): Promise<Client> {
  const client = new Client(
    { name: 'front-door-test', version: '1.0.0' },
    { capabilities: options.capabilities ?? { tasks: { list: {}, cancel: {} } } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${apiUrl}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    fetch: options.fetch,
  });
  await client.connect(transport);
  return client;
}

/**
 * An SDK client whose `streamOpen` resolves once the server answered its `GET /mcp` (the status
 * stream): a test waits on it instead of hoping the stream is up. Extra client capabilities
 * (e.g. elicitation) are merged in.
 */
export async function streamingClient(
  apiUrl: string,
  key: string,
  query = '',
  capabilities: Record<string, unknown> = {},
): Promise<{ client: Client; streamOpen: Promise<number> }> {
  let opened: (status: number) => void = () => undefined;
  const streamOpen = new Promise<number>((resolve) => (opened = resolve));
  const client = new Client(
    { name: 'front-door-test', version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {} }, ...capabilities } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${apiUrl}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      if (init?.method === 'GET') opened(res.status);
      return res;
    },
  });
  await client.connect(transport);
  return { client, streamOpen };
}

/** One JSON-RPC message a client POSTed, with the HTTP status its POST was answered with. */
export interface SentMessage {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read messages by path
  message: any;
  status: number;
}

/**
 * A fetch for sdkClient that records each JSON-RPC message the client POSTs, once its answer's
 * status is in: a test waits on `sent` (e.g. for the client's `notifications/cancelled` to have
 * been taken) instead of hoping it arrived.
 */
export function recordingFetch(): { fetch: FetchLike; sent: SentMessage[] } {
  const sent: SentMessage[] = [];
  const record: FetchLike = async (url, init) => {
    const res = await fetch(url, init);
    if (init?.method === 'POST' && typeof init.body === 'string') {
      sent.push({ message: JSON.parse(init.body), status: res.status });
    }
    return res;
  };
  return { fetch: record, sent };
}
