// Guards MCP_PUBLIC_URL: behind a proxy that publishes `/mcp` under another path, the 401 names
// the metadata at that path (RFC 9728) and the API serves it there, as well as at its own path.
import { discoverOAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import request from 'supertest';
import { ISSUER, useApi } from '../helpers/api';

const PUBLIC_URL = 'https://gateway.example/tools/mcp';
const api = useApi({ env: { MCP_PUBLIC_URL: PUBLIC_URL } });

const DOCUMENT = {
  resource: PUBLIC_URL,
  authorization_servers: [ISSUER],
  bearer_methods_supported: ['header'],
  resource_name: 'MCP Task Gateway',
};

it("names the metadata at the public URL's path in the 401", async () => {
  const res = await request(api.url).post('/mcp').send({ jsonrpc: '2.0', id: 1, method: 'ping' });
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toBe(
    'Bearer resource_metadata="https://gateway.example/.well-known/oauth-protected-resource/tools/mcp"',
  );
});

it.each(['/tools/mcp', '/tools/mcp/', '/mcp', '/MCP'])(
  'serves the document at the prefix and %s, without a token',
  async (path) => {
    const res = await request(api.url).get(`/.well-known/oauth-protected-resource${path}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(DOCUMENT);
  },
);

it.each(['', '/tools', '/other/mcp', '/tools/mcp/more'])(
  'answers 404 as a problem at the prefix and %j',
  async (path) => {
    const res = await request(api.url).get(`/.well-known/oauth-protected-resource${path}`);
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  },
);

it('answers another method 405 with the methods the path routes, as any route', async () => {
  const res = await request(api.url).post('/.well-known/oauth-protected-resource/tools/mcp');
  expect(res.status).toBe(405);
  expect(String(res.headers.allow).split(', ')).toContain('GET');
});

it('refuses a path that is not percent-encoding with a 400 problem, as any route', async () => {
  const res = await request(api.url).get('/.well-known/oauth-protected-resource/%FF');
  expect(res.status).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
});

it("is found by the MCP SDK's own discovery at the public path, through a proxy that passes it on", async () => {
  // The SDK forms the well-known URL from the server URL itself (no challenge read): as a client
  // that reaches the API at /tools/mcp would, through a proxy that keeps the path.
  const found = await discoverOAuthProtectedResourceMetadata(new URL(`${api.url}/tools/mcp`));
  expect(found).toMatchObject({ resource: PUBLIC_URL, authorization_servers: [ISSUER] });
});
