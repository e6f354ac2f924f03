import { Injectable } from '@nestjs/common';
import { CatalogEntry, CatalogRepository } from '@app/persistence';
import { scrubUpstreamText } from '@app/views';

/** A toolset as shown (api.md): never the server it runs on. */
export interface ToolsetView {
  name: string;
  description: string;
  contract: string;
  input_schema: Record<string, unknown>;
  available: boolean;
  unavailable_reason: string | null;
}

/** Entries remembered for find(); catalogs hold tens of toolsets, so this only bounds misuse. */
const MAX_REMEMBERED = 500;

/**
 * The catalog as the API shows and uses it. Every request sees the row as it is now (the table
 * holds tens of rows), so availability is as fresh as the pollers' last publish: read per
 * request, or, for a submit, checked by the insert itself against the version last read.
 */
@Injectable()
export class ToolsetCatalog {
  /** The last entry read per toolset and its row version, for find(). */
  private readonly remembered = new Map<string, { version: string; entry: CatalogEntry }>();

  constructor(private readonly catalog: CatalogRepository) {}

  async list(): Promise<ToolsetView[]> {
    return (await this.catalog.list()).map(toToolsetView);
  }

  /** The catalog's entries as stored, for the API's own use (they name the server). */
  rawList(): Promise<CatalogEntry[]> {
    return this.catalog.list();
  }

  /**
   * The toolset's entry as the database has it now. Still one read per call, but an unchanged
   * row comes back as its version only and the remembered entry (the same object, so the
   * arguments validator's compiled schema is found by identity) is returned.
   */
  async find(name: string): Promise<CatalogEntry | null> {
    const known = this.remembered.get(name);
    const found = await this.catalog.findIfChanged(name, known?.version);
    if (!found) {
      this.remembered.delete(name);
      return null;
    }
    if (!found.entry && known) return known.entry;
    // Without a known version the read always carries the entry; the check keeps types honest.
    const entry = found.entry ?? (await this.catalog.find(name));
    if (!entry) return null;
    if (this.remembered.size >= MAX_REMEMBERED) this.remembered.clear();
    this.remembered.set(name, { version: found.version, entry });
    return entry;
  }

  /**
   * The entry of `name` as last read by {@link find}, with its row version, without reading the
   * catalog: a caller may act on it only through a statement that checks the version is still
   * the row's (TaskRepository.createIfCatalogUnchanged).
   */
  lastRead(name: string): { version: string; entry: CatalogEntry } | undefined {
    return this.remembered.get(name);
  }

  /**
   * A lookup of why a toolset cannot take work now: its public reason ('' when none was given),
   * a note when it is gone from the catalog, or null when it is available.
   */
  async unavailability(): Promise<(toolset: string) => string | null> {
    const entries = new Map((await this.catalog.list()).map((e) => [e.name, e]));
    return (toolset) => unavailableReasonOf(entries.get(toolset) ?? null);
  }
}

/** Why a task of this toolset waits: its public reason, a note when it is gone, or null. */
export function unavailableReasonOf(entry: CatalogEntry | null): string | null {
  if (!entry) return 'it is no longer in the catalog';
  return entry.available ? null : publicReason(entry);
}

/** Projects one catalog entry through a whitelist; `server` stays internal. */
export function toToolsetView(entry: CatalogEntry): ToolsetView {
  return {
    name: entry.name,
    description: entry.description,
    contract: entry.contract,
    input_schema: entry.inputSchema,
    available: entry.available,
    unavailable_reason: entry.available ? null : publicReason(entry),
  };
}

/**
 * The unavailability reason with the internal server name replaced and addresses, URLs, paths
 * and opaque IDs redacted: pollers write reasons for operators, which consumers must not learn.
 */
export function publicReason(entry: CatalogEntry): string {
  const reason = entry.unavailableReason ?? '';
  const named = entry.server ? reason.split(entry.server).join('the upstream server') : reason;
  // Connect failures quote addresses, URLs and command paths: the same scrub as upstream words.
  return scrubUpstreamText(named, {});
}
