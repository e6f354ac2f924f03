import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { verifyWebhook } from '@app/webhooks';

/** One request as the receiver saw it. */
export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The signature checked out with the secret registered for the path. */
  verified: boolean;
}

/** How the receiver answers a path: a status, or never (a hung receiver). */
export type Answer = number | 'hang';

/**
 * A real HTTP receiver on 127.0.0.1 that verifies every signature with the secret registered for
 * the request's path, as an integrator's endpoint would.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private readonly secrets = new Map<string, string>();
  private readonly answers = new Map<string, Answer>();
  private readonly delays = new Map<string, number>();
  private server?: Server;
  /** Hung responses, by path. */
  private readonly hung = new Map<import('node:http').ServerResponse, string>();

  /** Registers a path: the secret to verify with, how to answer, and after how long. */
  route(path: string, secret: string, answer: Answer = 200, delayMs = 0): string {
    this.secrets.set(path, secret);
    this.answers.set(path, answer);
    this.delays.set(path, delayMs);
    return `${this.base}${path}`;
  }

  /** The secret registered for `path`. */
  secretOf(path: string): string {
    return this.secrets.get(path) ?? '';
  }

  get base(): string {
    return `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}`;
  }

  at(path: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.path === path);
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const path = req.url ?? '/';
        const body = Buffer.concat(chunks).toString('utf8');
        const secret = this.secrets.get(path);
        const verified = secret !== undefined && verifyWebhook(secret, req.headers, body);
        this.received.push({ path, headers: req.headers, body, verified });
        const answer = this.answers.get(path) ?? 404;
        if (answer === 'hang') {
          this.hung.set(res, path);
          return;
        }
        if (answer >= 300 && answer < 400) res.setHeader('location', `${this.base}/redirected`);
        res.statusCode = answer;
        const delay = this.delays.get(path) ?? 0;
        if (delay === 0) res.end('ok');
        else setTimeout(() => res.end('ok'), delay);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
  }

  /** Answers the requests hung on `path` with `status`; returns how many there were. */
  release(path: string, status: number): number {
    let released = 0;
    for (const [res, at] of [...this.hung]) {
      if (at !== path) continue;
      this.hung.delete(res);
      res.statusCode = status;
      res.end('ok');
      released++;
    }
    return released;
  }

  async stop(): Promise<void> {
    for (const res of this.hung.keys()) res.destroy();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}
