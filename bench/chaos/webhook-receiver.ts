import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { verifyWebhook } from '@app/webhooks';

/**
 * A local webhook receiver that checks each delivery as a consumer would (Standard Webhooks
 * signature and timestamp) and records which (task, event type) pairs arrived. It answers 204 to
 * every valid delivery, so any missing event is the gateway's loss, never a refusal.
 */
export class WebhookReceiver {
  /** `${task_id} ${type}` → deliveries received (at-least-once: may exceed 1). */
  readonly received = new Map<string, number>();
  readonly badSignatures: string[] = [];
  deliveries = 0;
  secret = '';
  private server?: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      void readBody(req).then((body) => {
        const ok = this.secret !== '' && verifyWebhook(this.secret, req.headers, body);
        if (!ok) {
          this.badSignatures.push(String(req.headers['webhook-id']));
          res.writeHead(400).end();
          return;
        }
        this.record(body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  has(taskId: string, type: string): boolean {
    return (this.received.get(`${taskId} ${type}`) ?? 0) > 0;
  }

  private record(body: string): void {
    this.deliveries++;
    const event = JSON.parse(body) as { type: string; task: { task_id: string } };
    const key = `${event.task.task_id} ${event.type}`;
    this.received.set(key, (this.received.get(key) ?? 0) + 1);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}
