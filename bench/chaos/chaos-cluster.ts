import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiKeyRepository, Database, WebhookRepository } from '@app/persistence';
import { newWebhookSecret } from '@app/webhooks';
import { freePort } from '@app/dev-db';
import { DEMO_SERVER_MAIN } from '../../test/helpers/processes';
import { ApiReplica } from './api-replica';
import { ChaosDatabase } from './chaos-database';
import { chaosServersFile, chaosToolsets } from './chaos-toolsets';
import { DemoUpstream } from './demo-upstream';
import { PollerSlot } from './poller-slot';
import { WebhookReceiver } from './webhook-receiver';

export const CHAOS_USER = 'chaos';

/**
 * Everything a chaos run starts: its own Postgres, two HTTP demo servers (A restarts, B hangs),
 * three pollers (each with its stdio demo child), two API replicas and a webhook receiver.
 */
export class ChaosCluster {
  readonly pollers: PollerSlot[];
  readonly apis: ApiReplica[];
  readonly receiver = new WebhookReceiver();
  /** How the webhook subscription was made: through the API, or straight into the table. */
  webhookMode: 'api' | 'database' = 'api';
  apiKey = '';

  private constructor(
    readonly dir: string,
    readonly db: ChaosDatabase,
    readonly upstreamA: DemoUpstream,
    readonly upstreamB: DemoUpstream,
    fault: 'all' | 'failover',
  ) {
    const serversFile = join(dir, 'mcp-servers.json');
    const toolsets = chaosToolsets(fault);
    writeFileSync(
      serversFile,
      JSON.stringify(
        chaosServersFile(
          upstreamA.url,
          upstreamB.url,
          DEMO_SERVER_MAIN,
          toolsets,
          // Its five HTTP sessions per poller start at once on a loaded box; one parked at start
          // (connect slower than 2 s) would otherwise wait out the 300 s default probe, far
          // past the catalog wait, since no work reaches it before the catalog is ready.
          fault === 'failover' ? { parkedProbeMs: 5000 } : {},
        ),
        null,
        2,
      ),
    );
    this.pollers = [1, 2, 3].map((i) => new PollerSlot(i, () => db.url, serversFile));
    mkdirSync(join(dir, 'logs'), { recursive: true });
    this.apis = [1, 2].map((i) => new ApiReplica(db.url, join(dir, 'logs', `api-${i}.log`)));
  }

  /** `fault: 'failover'`: a replicated database and the 2026-07-28 native toolset as well. */
  static async start(dir: string, fault: 'all' | 'failover' = 'all'): Promise<ChaosCluster> {
    mkdirSync(dir, { recursive: true });
    const db = await ChaosDatabase.start(join(dir, 'pg'), fault === 'failover');
    const [portA, portB] = [await freePort(), await freePort()];
    const a = new DemoUpstream('upstream-a', portA, join(dir, 'upstream-a.json'));
    const b = new DemoUpstream('upstream-b', portB, join(dir, 'upstream-b.json'));
    const cluster = new ChaosCluster(dir, db, a, b, fault);
    try {
      await Promise.all([a.start(), b.start()]);
      await Promise.all([
        ...cluster.pollers.map((p) => p.start()),
        ...cluster.apis.map((x) => x.start()),
      ]);
      cluster.apiKey = (
        await new ApiKeyRepository(new Database(db.pool)).create(CHAOS_USER, 'chaos')
      ).key;
    } catch (error) {
      // Whatever did start must not outlive the run; what each wrote stays in the work directory.
      cluster.keepLogs();
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /**
   * Writes every poller incarnation's output to `logs/` in the work directory (the API replicas
   * write theirs there as they go): at the end of a run, and when the cluster fails to start.
   */
  keepLogs(): void {
    const logs = join(this.dir, 'logs');
    mkdirSync(logs, { recursive: true });
    for (const slot of this.pollers) {
      for (const poller of [...slot.retired, ...(slot.current ? [slot.current] : [])]) {
        const lines = poller.logs.map((line) => JSON.stringify(line)).join('\n');
        writeFileSync(join(logs, `${poller.workerId}.jsonl`), `${lines}\n`);
        const stderr = poller.stderr();
        if (stderr !== '') writeFileSync(join(logs, `${poller.workerId}.stderr`), stderr);
      }
    }
  }

  apiUrls(): string[] {
    return this.apis.map((api) => api.url);
  }

  /**
   * Subscribes the receiver. POST /v1/webhooks when the API serves it; while that route is not
   * wired (404), the subscription row is written directly so delivery by the pollers is still
   * exercised, and the report says which way it went.
   */
  async subscribeWebhooks(): Promise<void> {
    const url = await this.receiver.start();
    const res = await fetch(`${this.apis[0].url}/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url }),
    });
    if (res.status === 201) {
      this.receiver.secret = String(((await res.json()) as { secret: string }).secret);
      return;
    }
    if (res.status !== 404)
      throw new Error(`POST /v1/webhooks answered ${res.status}: ${await res.text()}`);
    this.webhookMode = 'database';
    this.receiver.secret = newWebhookSecret();
    await new WebhookRepository(new Database(this.db.pool)).create({
      id: 'wh_chaosreceiver000000000000000',
      userId: CHAOS_USER,
      url,
      description: 'chaos receiver',
      secret: this.receiver.secret,
    });
  }

  async stop(): Promise<void> {
    await Promise.allSettled(this.pollers.map((p) => p.stop()));
    await Promise.allSettled(this.apis.map((api) => api.stop()));
    await Promise.allSettled([this.upstreamA.stop(), this.upstreamB.stop(), this.receiver.stop()]);
    await this.db.stop();
  }
}
