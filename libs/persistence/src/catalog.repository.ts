import { Contract } from '@app/common';
import { Queryable, jsonParam } from './database';

export interface CatalogEntry {
  name: string;
  server: string;
  contract: Contract;
  description: string;
  inputSchema: Record<string, unknown>;
  available: boolean;
  unavailableReason: string | null;
}

/** The toolset catalog: written by pollers after each connect, read by the API. */
export class CatalogRepository {
  constructor(private readonly db: Queryable) {}

  async publish(entries: CatalogEntry[]): Promise<void> {
    for (const entry of entries) {
      await this.db.query(
        `INSERT INTO toolsets (name, server, contract, description, input_schema, available,
                               unavailable_reason, updated_at)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, now())
         ON CONFLICT (name) DO UPDATE SET server = $2, contract = $3, description = $4,
           input_schema = $5::jsonb, available = $6, unavailable_reason = $7, updated_at = now()`,
        [
          entry.name,
          entry.server,
          entry.contract,
          entry.description,
          jsonParam(entry.inputSchema),
          entry.available,
          entry.unavailableReason,
        ],
      );
    }
  }

  /** Marks every toolset of a server unavailable with a reason (for example, parked). */
  async markServerUnavailable(server: string, reason: string): Promise<void> {
    await this.db.query(
      `UPDATE toolsets SET available = false, unavailable_reason = $2, updated_at = now()
        WHERE server = $1`,
      [server, reason],
    );
  }

  async list(): Promise<CatalogEntry[]> {
    const rows = await this.db.query(`SELECT * FROM toolsets ORDER BY name`);
    return rows.map(toEntry);
  }

  async find(name: string): Promise<CatalogEntry | null> {
    const rows = await this.db.query(`SELECT * FROM toolsets WHERE name = $1`, [name]);
    return rows.length > 0 ? toEntry(rows[0]) : null;
  }
}

function toEntry(row: Record<string, unknown>): CatalogEntry {
  return {
    name: row.name as string,
    server: row.server as string,
    contract: row.contract as Contract,
    description: row.description as string,
    inputSchema: row.input_schema as Record<string, unknown>,
    available: row.available as boolean,
    unavailableReason: row.unavailable_reason as string | null,
  };
}
