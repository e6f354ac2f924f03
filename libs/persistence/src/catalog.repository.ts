import { Contract, McpExposure, PublishedToolset, defaultMcpExposure } from '@app/common';
import { Queryable, jsonParam } from './database';
import { FAIL_QUEUED_OF_REMOVED_SQL, SWEEP_REMOVED_TOOLSETS_SQL } from './sql/catalog-sweep.sql';

/** A toolset as the catalog holds it: as published, with the fleet-wide removal mark. */
export interface CatalogEntry extends PublishedToolset {
  /**
   * No live worker has this toolset in its mcpServers file: it takes no new tasks (the API
   * answers 422) and its queued tasks fail `toolset_removed` after REMOVED_TOOLSET_GRACE_MS.
   */
  removed: boolean;
}

/** Consumer-facing reason of a removed toolset (no server or worker named). */
export const REMOVED_TOOLSET_REASON =
  'no longer configured on any running gateway worker (removed from the configuration)';

/** One toolset whose removal state the sweep changed. */
export interface SweptToolset {
  name: string;
  removed: boolean;
}

/** The toolset catalog: written by pollers after each connect, read by the API. */
export class CatalogRepository {
  constructor(private readonly db: Queryable) {}

  /**
   * Upserts the rows of a publisher's toolsets; publishing proves them configured again. Each
   * entry is its own statement, and one that fails does not stop the entries after it: they are
   * all tried, then the first error is thrown, naming how many failed.
   */
  async publish(entries: readonly PublishedToolset[]): Promise<void> {
    const failed: { name: string; error: unknown }[] = [];
    for (const entry of entries) {
      try {
        await this.publishOne(entry);
      } catch (error) {
        failed.push({ name: entry.name, error });
      }
    }
    if (failed.length > 0) {
      const names = failed.map((f) => f.name).join(', ');
      throw new Error(`${failed.length} of ${entries.length} toolsets not published (${names})`, {
        cause: failed[0].error,
      });
    }
  }

  private async publishOne(entry: PublishedToolset): Promise<void> {
    await this.db.query(
      `INSERT INTO toolsets (name, server, contract, description, input_schema, available,
                             unavailable_reason, mcp, deadline_seconds, updated_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8::jsonb, $9, now())
       ON CONFLICT (name) DO UPDATE SET server = $2, contract = $3, description = $4,
         input_schema = $5::jsonb, available = $6, unavailable_reason = $7, mcp = $8::jsonb,
         deadline_seconds = $9, updated_at = now(), removed_at = NULL`,
      [
        entry.name,
        entry.server,
        entry.contract,
        entry.description,
        jsonParam(entry.inputSchema),
        entry.available,
        entry.unavailableReason,
        jsonParam(entry.mcp ?? null),
        entry.deadlineSeconds ?? null,
      ],
    );
  }

  /**
   * Marks toolsets that no live worker lists as removed, and clears the mark of those one lists
   * again. Does nothing unless `workerId` itself is live and Postgres has been up for the
   * dead-after window (right after a restart every heartbeat looks stale).
   */
  async sweepRemoved(workerId: string, deadAfterMs: number): Promise<SweptToolset[]> {
    const rows = await this.db.query<{ name: string; removed: boolean }>(
      SWEEP_REMOVED_TOOLSETS_SQL,
      [workerId, deadAfterMs],
    );
    return rows.map((row) => ({ name: row.name, removed: row.removed }));
  }

  /**
   * Ends up to `limit` queued, unleased tasks of toolsets removed for at least `graceMs`:
   * `failed`/`toolset_removed`, `failed`/`outcome_uncertain` when a submit may have been sent,
   * or `cancelled` when a cancel was requested before any submit. Returns their IDs.
   */
  async failQueuedOfRemoved(graceMs: number, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(FAIL_QUEUED_OF_REMOVED_SQL, [graceMs, limit]);
    return rows.map((row) => row.id);
  }

  async list(): Promise<CatalogEntry[]> {
    const rows = await this.db.query(`SELECT * FROM toolsets ORDER BY name`);
    return rows.map(toEntry);
  }

  async find(name: string): Promise<CatalogEntry | null> {
    const rows = await this.db.query(`SELECT * FROM toolsets WHERE name = $1`, [name]);
    return rows.length > 0 ? toEntry(rows[0]) : null;
  }

  /**
   * The entry of `name` unless its row is still the version `knownVersion` names: `version` is
   * the row version's `xmin`, which every UPDATE of the row changes, so `entry` is undefined
   * exactly when the caller's copy is current. A submit reads its toolset every time; this keeps
   * that read fresh while sparing the parse of an unchanged input schema (kilobytes of JSON).
   */
  async findIfChanged(
    name: string,
    knownVersion: string | undefined,
  ): Promise<{ version: string; entry?: CatalogEntry } | null> {
    const rows = await this.db.query<{ version: string; row: Record<string, unknown> | null }>(
      `SELECT t.xmin::text AS version,
              CASE WHEN t.xmin::text IS DISTINCT FROM $2 THEN row_to_json(t) END AS row
         FROM toolsets t WHERE t.name = $1`,
      [name, knownVersion ?? null],
      'catalog_find_if_changed',
    );
    if (rows.length === 0) return null;
    const { version, row } = rows[0];
    return row ? { version, entry: toEntry(row) } : { version };
  }
}

function toEntry(row: Record<string, unknown>): CatalogEntry {
  const removed = row.removed_at !== null && row.removed_at !== undefined;
  return {
    name: row.name as string,
    server: row.server as string,
    contract: row.contract as Contract,
    description: row.description as string,
    inputSchema: row.input_schema as Record<string, unknown>,
    available: !removed && (row.available as boolean),
    unavailableReason: removed ? REMOVED_TOOLSET_REASON : (row.unavailable_reason as string | null),
    removed,
    mcp: (row.mcp as McpExposure | null) ?? defaultMcpExposure(row.name as string),
    deadlineSeconds: (row.deadline_seconds as number | null) ?? null,
  };
}
