import { Capacity } from '@app/leasing';
import { GatewayMetrics } from '@app/metrics';

/** What the slots need of a claimed item: the upstream server it calls. */
export interface OnServer {
  server: string;
}

/**
 * This worker's capacity: WORKER_SLOTS in total and, per upstream server, its
 * `maxConcurrentCalls`. A slot is taken before an item starts and given back when it settles,
 * so a hung server holds only its own slots (leases.md, "Concurrency and isolation").
 */
export class ServerSlots implements Capacity<OnServer> {
  private readonly used = new Map<string, number>();
  private total = 0;

  /**
   * @param totalSlots WORKER_SLOTS.
   * @param limits per-server maxConcurrentCalls; a server absent here (a row whose toolset left
   *   the config) is bounded by the total only: its items end at once with a transient error.
   */
  constructor(
    private readonly totalSlots: number,
    private readonly limits: ReadonlyMap<string, number>,
    private readonly metrics?: Pick<GatewayMetrics, 'inflight' | 'workerSlotsFree'>,
  ) {
    this.metrics?.workerSlotsFree.set(totalSlots);
  }

  /** Slots free in total. */
  free(): number {
    return this.totalSlots - this.total;
  }

  /** Configured servers whose limit is used up: the claim skips their rows. */
  saturated(): string[] {
    const out: string[] = [];
    for (const [server, limit] of this.limits) {
      if ((this.used.get(server) ?? 0) >= limit) out.push(server);
    }
    return out;
  }

  /** How many configured servers are full once `items` (claimed, not started yet) take their slots. */
  saturatedWith(items: readonly OnServer[]): number {
    const adding = new Map<string, number>();
    for (const { server } of items) adding.set(server, (adding.get(server) ?? 0) + 1);
    let full = 0;
    for (const [server, limit] of this.limits) {
      if ((this.used.get(server) ?? 0) + (adding.get(server) ?? 0) >= limit) full += 1;
    }
    return full;
  }

  /** Free room per configured server (the claim takes no more of a server's rows than this). */
  room(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [server, limit] of this.limits) {
      out.set(server, Math.max(0, limit - (this.used.get(server) ?? 0)));
    }
    return out;
  }

  /**
   * How many rows a claim may take now: the free total, but no more than the configured servers
   * that still have room could run (rows of unknown servers are rare and end at once).
   */
  claimable(): number {
    let room = 0;
    for (const [server, limit] of this.limits) {
      room += Math.max(0, limit - (this.used.get(server) ?? 0));
    }
    return Math.min(this.free(), this.limits.size === 0 ? this.free() : room);
  }

  /** Takes a slot for the item's server; false when the worker or that server is full. */
  acquire({ server }: OnServer): boolean {
    const used = this.used.get(server) ?? 0;
    const limit = this.limits.get(server);
    if (this.free() <= 0 || (limit !== undefined && used >= limit)) return false;
    this.used.set(server, used + 1);
    this.total += 1;
    this.report(server);
    return true;
  }

  release({ server }: OnServer): void {
    const used = this.used.get(server) ?? 0;
    if (used <= 0) return;
    this.used.set(server, used - 1);
    this.total -= 1;
    this.report(server);
  }

  inUse(): number {
    return this.total;
  }

  private report(server: string): void {
    this.metrics?.inflight.set({ server }, this.used.get(server) ?? 0);
    this.metrics?.workerSlotsFree.set(this.free());
  }
}
