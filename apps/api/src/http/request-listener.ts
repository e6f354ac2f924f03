import type { RequestListener, Server } from 'node:http';

/**
 * Puts `first` in `fallback`'s place as `server`'s request listener: `first` answers the requests
 * it takes and hands the rest to `fallback`. Other listeners of `request` (the connection closer's)
 * stay as they are. Throws when `fallback` is not a listener: both answering one request would be
 * worse than no fast path.
 */
export function standBefore(
  server: Server,
  fallback: RequestListener,
  first: (...args: Parameters<RequestListener>) => void,
): void {
  if (!server.listeners('request').includes(fallback)) {
    throw new Error('no such request listener to stand before');
  }
  server.removeListener('request', fallback);
  server.prependListener('request', first);
}
