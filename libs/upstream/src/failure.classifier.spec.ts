// Guards docs/connections.md, "Failure classification": an HTTP error page (a proxy's 502 while
// the server restarts) is transient however much HTML it carries, on the SDK's side as on the
// 2026-07-28 client's; a web page answered with success, or a 401, parks the server at once.
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { classifyConnectFailure } from './failure.classifier';
import { mapRequestError } from './2025/request-error.mapper';

const PAGE = '<html><head><meta http-equiv="Content-Type" content="text/html"></head></html>';
const context = { server: 's', timeoutMs: 1000, hadSession: false, transportClosed: false };

it("an error status with an HTML page is transient, raw or as the connection layer's error", () => {
  const raw = new StreamableHTTPError(502, `Error POSTing to endpoint: ${PAGE}`);
  expect(classifyConnectFailure(raw).permanent).toBe(false);
  expect(classifyConnectFailure(mapRequestError(raw, context)).permanent).toBe(false);
});

it('a web page answered with success, and a 401, park at once', () => {
  const web = new StreamableHTTPError(-1, 'Unexpected content type: text/html');
  expect(classifyConnectFailure(web)).toEqual({
    permanent: true,
    reason: 'not an MCP endpoint: it answers with HTML',
  });
  expect(classifyConnectFailure(mapRequestError(web, context)).permanent).toBe(true);
  const denied = new StreamableHTTPError(401, `Error POSTing to endpoint: ${PAGE}`);
  expect(classifyConnectFailure(denied)).toMatchObject({ permanent: true });
});
