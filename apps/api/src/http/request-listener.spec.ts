// Guards against the submit fast path and Express both answering one request: the fast path
// takes Express's place as the server's request listener, or refuses to start.
import { createServer, RequestListener } from 'node:http';
import { standBefore } from './request-listener';

it("takes the fallback's place and leaves the other listeners", () => {
  const express: RequestListener = () => undefined;
  const other: RequestListener = () => undefined;
  const first: RequestListener = () => undefined;
  const server = createServer(express);
  server.on('request', other);
  standBefore(server, express, first);
  expect(server.listeners('request')).toEqual([first, other]);
});

it('refuses when the fallback is not a listener, and changes nothing', () => {
  const express: RequestListener = () => undefined;
  const server = createServer(express);
  expect(() =>
    standBefore(
      server,
      () => undefined,
      () => undefined,
    ),
  ).toThrow(/no such/);
  expect(server.listeners('request')).toEqual([express]);
});
