// MCP SDK clients of the API's front door (`/mcp`), for the tests that speak MCP to the gateway.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** An MCP SDK client connected to `/mcp` of `apiUrl` with a bearer key. */
export async function sdkClient(apiUrl: string, key: string, query = ''): Promise<Client> {
  const client = new Client(
    { name: 'front-door-test', version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {} } } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${apiUrl}/mcp${query}`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
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
