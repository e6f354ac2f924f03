// Guards docs/connections.md, requirements 6 and 7: an HTTP error status answered to one request
// on a session is that request's failure (it says whether the request may have been processed),
// not the session's; a 404 to a request with a session is the session's end.
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { breaksSession } from './bound-session.adapter';
import { mapRequestError } from './request-error.mapper';
import { sessionAnswered } from './session-health.check';
import {
  UpstreamConnectionError,
  UpstreamHttpError,
  UpstreamSessionExpiredError,
} from '../upstream.errors';

const onSession = { server: 's', timeoutMs: 1000, hadSession: true, transportClosed: false };
const page = (status: number) =>
  new StreamableHTTPError(status, 'Error POSTing to endpoint: <html>Bad Gateway</html>');

it.each([
  [502, true],
  [503, true],
  [429, false],
  [400, false],
])('HTTP %i is this request’s: maybe sent %s, the session kept', (status, maybeSent) => {
  const error = mapRequestError(page(status), onSession);
  expect(error).toBeInstanceOf(UpstreamHttpError);
  expect(error).toMatchObject({ status, maybeSent });
  expect(breaksSession(error)).toBe(false);
});

it('a 404 ends the session it was sent on; without a session it is a refusal', () => {
  const expired = mapRequestError(page(404), onSession);
  expect(expired).toBeInstanceOf(UpstreamSessionExpiredError);
  expect(breaksSession(expired)).toBe(true);
  const refused = mapRequestError(page(404), { ...onSession, hadSession: false });
  expect(refused).toMatchObject({ status: 404, maybeSent: false });
});

it('a failure without a status is still the connection’s', () => {
  const error = mapRequestError(new StreamableHTTPError(-1, 'Unexpected content type'), onSession);
  expect(error).not.toBeInstanceOf(UpstreamHttpError);
  expect(error).toBeInstanceOf(UpstreamConnectionError);
  expect(breaksSession(error)).toBe(true);
});

it('a session check answered 429 shows the session alive; a 502 does not', () => {
  expect(sessionAnswered(mapRequestError(page(429), onSession))).toBe(true);
  expect(sessionAnswered(mapRequestError(page(502), onSession))).toBe(false);
});
