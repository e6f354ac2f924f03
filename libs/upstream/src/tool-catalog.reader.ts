import { ListToolsResultSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { UpstreamProtocolError } from './upstream.errors';
import type { RequestOptions } from './upstream.port';

/** Whatever can send a request: a 2025-11-25 connection or the stateless 2026-07-28 client. */
interface Requester {
  readonly server: string;
  request(
    method: string,
    params: Record<string, unknown>,
    options: RequestOptions,
  ): Promise<unknown>;
}

/** A server that pages forever must not hang the connect: 100 pages is far beyond real catalogs. */
const MAX_PAGES = 100;

/** tools/list following nextCursor (requirement 14). Idempotent, so safe to repeat. */
export async function readToolCatalog(connection: Requester): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const raw = await connection.request('tools/list', cursor ? { cursor } : {}, {
      idempotent: true,
    });
    const parsed = ListToolsResultSchema.safeParse(raw);
    if (!parsed.success) {
      throw new UpstreamProtocolError(connection.server, `tools/list: ${parsed.error.message}`);
    }
    tools.push(...parsed.data.tools);
    cursor = parsed.data.nextCursor;
    if (!cursor) return tools;
  }
  throw new UpstreamProtocolError(connection.server, `tools/list has more than ${MAX_PAGES} pages`);
}
