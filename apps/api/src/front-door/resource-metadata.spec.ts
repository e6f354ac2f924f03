// Guards where `/mcp`'s protected-resource metadata is named and served (RFC 9728, section 3.1):
// the resource's path after the well-known prefix, a resource at `/` at the bare prefix.
import { resourceMetadataUrl, servesResourceMetadataAt } from './resource-metadata';

describe('resourceMetadataUrl', () => {
  it.each([
    [
      'http://gateway.local:3000/mcp',
      'http://gateway.local:3000/.well-known/oauth-protected-resource/mcp',
    ],
    [
      'https://gw.example/tools/mcp',
      'https://gw.example/.well-known/oauth-protected-resource/tools/mcp',
    ],
    [
      'https://gw.example/tools/mcp/',
      'https://gw.example/.well-known/oauth-protected-resource/tools/mcp/',
    ],
    ['https://mcp.example/', 'https://mcp.example/.well-known/oauth-protected-resource'],
    ['https://mcp.example', 'https://mcp.example/.well-known/oauth-protected-resource'],
  ])('names %s at %s', (resource, metadata) => {
    expect(resourceMetadataUrl(new URL(resource))).toBe(metadata);
  });
});

describe('servesResourceMetadataAt', () => {
  it.each([
    [undefined, ['/mcp', '/MCP', '/mcp/'], ['', '/', '/tools/mcp', '/mcp/x']],
    [
      'https://gw.example/tools/mcp',
      ['/mcp', '/tools/mcp', '/tools/mcp/'],
      ['', '/tools', '/TOOLS/mcp'],
    ],
    ['https://gw.example/tools/mcp/', ['/mcp', '/tools/mcp', '/tools/mcp/'], ['', '/other/mcp']],
    ['https://mcp.example/', ['', '/', '/mcp'], ['/tools/mcp']],
  ])('with MCP_PUBLIC_URL %s serves %j and nothing at %j', (publicUrl, served, refused) => {
    for (const suffix of served) {
      expect([suffix, servesResourceMetadataAt(suffix, publicUrl)]).toEqual([suffix, true]);
    }
    for (const suffix of refused) {
      expect([suffix, servesResourceMetadataAt(suffix, publicUrl)]).toEqual([suffix, false]);
    }
  });
});
