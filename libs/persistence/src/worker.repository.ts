import { Queryable } from './database';
import { beatWithin, HEARTBEAT_SQL, SUSPECT_SILENT_SQL } from './sql/worker-liveness.sql';

export interface WorkerInfo {
  id: string;
  host: string;
  pid: number;
  version: string;
  /** The toolsets of its mcpServers file: what the catalog sweep counts as configured. */
  toolsets: readonly string[];
}

/** Poller registration and heartbeats; liveness is judged by the database clock. */
export class WorkerRepository {
  constructor(private readonly db: Queryable) {}

  async register(worker: WorkerInfo): Promise<void> {
    await this.db.query(
      `INSERT INTO workers (id, host, pid, version, toolsets) VALUES ($1, $2, $3, $4, $5::text[])
       ON CONFLICT (id) DO UPDATE SET host = $2, pid = $3, version = $4, toolsets = $5::text[],
         started_at = now(), heartbeat_at = now(), alive_since = now(), stopped_at = NULL`,
      [worker.id, worker.host, worker.pid, worker.version, [...worker.toolsets]],
    );
  }

  /**
   * Returns false when the row is gone or marked stopped (another process took the ID). A beat
   * later than the streak's break starts a new run (`alive_since`); one that landed then marks the
   * other workers silent past `deadAfterMs` as suspected. Both rules, and how a worker is judged
   * dead from them, are worker-liveness.sql.ts (leases.md, "Workers").
   */
  async heartbeat(id: string, deadAfterMs: number): Promise<boolean> {
    const rows = await this.db.query(HEARTBEAT_SQL, [id, deadAfterMs]);
    if (rows.length === 0) return false;
    await this.db.query(SUSPECT_SILENT_SQL, [id, deadAfterMs]);
    return true;
  }

  async markStopped(id: string): Promise<void> {
    await this.db.query(`UPDATE workers SET stopped_at = now() WHERE id = $1`, [id]);
  }

  /** Workers whose heartbeat is younger than `deadAfterMs`. */
  async countAlive(deadAfterMs: number): Promise<number> {
    const rows = await this.db.query<{ n: string }>(
      `SELECT count(*) AS n FROM workers
        WHERE stopped_at IS NULL AND ${beatWithin('workers', '$1')}`,
      [deadAfterMs],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Forgets workers stopped or silent for longer than `olderThanMs` that pin no active task (an
   * active task is one with a lease row).
   */
  async prune(olderThanMs: number): Promise<void> {
    await this.db.query(
      `DELETE FROM workers WHERE heartbeat_at < now() - make_interval(secs => $1::float8 / 1000)
         AND NOT EXISTS (SELECT 1 FROM task_leases l WHERE l.pinned_worker_id = workers.id)`,
      [olderThanMs],
    );
  }
}
