import { request as httpRequest, IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { CheckedDestination } from './destination.guard';

/** One POST of a webhook message. */
export interface WebhookPost {
  destination: CheckedDestination;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

/** What came back: a status code, or an error (timeout, refused connection, TLS). */
export interface WebhookAnswer {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

/**
 * POSTs once and never follows a redirect (node:http does not; a 3xx is just a status). The
 * socket connects to the checked address through a pinned `lookup`, while TLS still verifies
 * the certificate against the URL's host name. The whole exchange, body included, has one
 * deadline. Never rejects: every failure is an answer with an error text.
 */
export function postWebhook(post: WebhookPost): Promise<WebhookAnswer> {
  const { destination } = post;
  const started = performance.now();
  // Node calls lookup with `all: true` when it races address families (autoSelectFamily).
  const pinned: LookupFunction = (_host, options, callback: PinnedCallback) => {
    if (options.all) callback(null, [{ address: destination.address, family: destination.family }]);
    else callback(null, destination.address, destination.family);
  };
  const send = destination.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    let statusCode: number | null = null;
    let settled = false;
    const finish = (error: string | null): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const durationMs = Math.round(performance.now() - started);
      resolve({ statusCode, durationMs, error: statusCode === null ? error : null });
    };
    const req = send(destination.url, {
      method: 'POST',
      headers: { ...post.headers, 'content-length': Buffer.byteLength(post.body).toString() },
      lookup: pinned,
      // A fresh connection per attempt: a pooled socket could be one opened to another address.
      agent: false,
    });
    const timer = setTimeout(() => {
      finish(`timed out after ${post.timeoutMs} ms`);
      req.destroy();
    }, post.timeoutMs);
    req.on('response', (res: IncomingMessage) => {
      statusCode = res.statusCode ?? null;
      // The answer's body is not used; read and drop it so the exchange completes.
      res.resume();
      res.on('end', () => finish(null));
      res.on('error', () => finish(null));
    });
    req.on('error', (error: Error) => finish(error.message.slice(0, 300)));
    req.end(post.body);
  });
}

type PinnedCallback = (
  error: Error | null,
  address: string | Array<{ address: string; family: number }>,
  family?: number,
) => void;
