import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/**
 * Reads and writes the demo server's whole state as one JSON file. Writes go to a temporary file
 * that is then renamed over the old one: a crash mid-write (the crash_* faults do exactly that)
 * leaves either the old or the new file, never a torn one. Synchronous on purpose: the
 * crash faults call process.exit right after saving, and an async write would be lost.
 */
export class StateFileRepository<T> {
  constructor(private readonly path: string) {}

  load(): T | undefined {
    if (!existsSync(this.path)) return undefined;
    const text = readFileSync(this.path, 'utf8');
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw new Error(`state file ${this.path} is not valid JSON: ${(error as Error).message}`);
    }
  }

  save(state: T): void {
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(state));
    renameSync(temporary, this.path);
  }
}
