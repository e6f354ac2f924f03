import { ChaosDatabase } from './chaos-database';

const SNAPSHOT_SQL = `
SELECT id, status || '|' || coalesce(error_code, '') || '|' ||
       to_char(completed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') || '|' ||
       coalesce(remote_task_id, '') || '|' || md5(coalesce(result::text, '')) AS snapshot
  FROM tasks WHERE completed_at IS NOT NULL`;

/**
 * Invariant 4 seen from outside: every second, remembers each terminal row as first seen
 * (status, error code, completion time, remote ID, result digest); at the end the checker
 * compares the final rows with those first sightings. Samples that fail while Postgres restarts
 * are skipped: a missed sample only delays a first sighting.
 */
export class TerminalWatch {
  readonly firstSeen = new Map<string, string>();
  samples = 0;
  private timer?: NodeJS.Timeout;
  private inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly db: ChaosDatabase) {}

  start(intervalMs = 1000): void {
    this.timer = setInterval(() => {
      this.inFlight = this.inFlight.then(() => this.sample());
    }, intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
    await this.sample();
  }

  /** Rows whose terminal state differs from their first sighting. */
  async changed(): Promise<string[]> {
    const rows = await this.db.queryPatiently<{ id: string; snapshot: string }>(SNAPSHOT_SQL);
    const now = new Map(rows.map((row) => [row.id, row.snapshot]));
    const problems: string[] = [];
    for (const [id, first] of this.firstSeen) {
      const last = now.get(id);
      if (last !== first)
        problems.push(`${id}: terminal row changed from ${first} to ${last ?? 'deleted'}`);
    }
    return problems;
  }

  private async sample(): Promise<void> {
    try {
      const rows = await this.db.query<{ id: string; snapshot: string }>(SNAPSHOT_SQL);
      for (const row of rows)
        if (!this.firstSeen.has(row.id)) this.firstSeen.set(row.id, row.snapshot);
      this.samples++;
    } catch {
      // Postgres is restarting; the next sample catches up.
    }
  }
}
