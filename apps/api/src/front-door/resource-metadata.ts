/**
 * Where the protected-resource metadata of `/mcp` is named and served (RFC 9728, section 3.1;
 * docs/mcp.md, "Transport"): the well-known prefix, then the resource's path.
 */

/** The well-known prefix of protected-resource metadata (RFC 9728, section 3). */
export const RESOURCE_METADATA_PREFIX = '/.well-known/oauth-protected-resource';

/** The URL `text` spells, or null when it spells none. */
export function parsedUrl(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** The metadata URL of a resource: its origin, the prefix, its path (a path of `/` dropped). */
export function resourceMetadataUrl(resource: URL): string {
  const path = resource.pathname === '/' ? '' : resource.pathname;
  return `${resource.origin}${RESOURCE_METADATA_PREFIX}${path}`;
}

/**
 * Whether a metadata request whose path has `suffix` after the prefix is one the gateway serves:
 * `/mcp`'s own (in any case, as `/mcp` itself), and MCP_PUBLIC_URL's, for a proxy that publishes
 * `/mcp` under another path and passes the well-known path on unchanged. A trailing `/` is not
 * significant, as on the API's routes.
 */
export function servesResourceMetadataAt(suffix: string, publicUrl: string | undefined): boolean {
  const wanted = withoutTrailingSlash(suffix);
  if (wanted.toLowerCase() === '/mcp') return true;
  const published = publicUrl === undefined ? null : parsedUrl(publicUrl);
  return published !== null && withoutTrailingSlash(published.pathname) === wanted;
}

function withoutTrailingSlash(path: string): string {
  return path.endsWith('/') ? path.slice(0, -1) : path;
}
