import {
  existsSync,
  ftruncateSync,
  openSync,
  readFileSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';

/** What a state file held at start: the last snapshot, and the changes appended since. */
export interface LoadedState<T, R> {
  snapshot?: T;
  records: R[];
}

/**
 * The demo server's state on disk: a snapshot (`PATH`, one JSON document) and a journal beside it
 * (`PATH.journal`, one JSON record per line) of the changes made since. A change appends one
 * short line instead of rewriting every job: the whole state was written on each change before,
 * so a poll cost more the more jobs the server had ever held (3.5 ms a change for a chaos run's
 * state of 1,200 jobs, about 300 KB, timed by a throwaway script outside the repository), and a
 * long `npm start` or a chaos run's upstream spent its CPU rewriting it.
 * Records hold absolute values (a job, a counter group, a tag), so replaying one twice changes
 * nothing.
 *
 * Crash safety: every write is synchronous, since the crash_* faults call process.exit right
 * after a change. A line cut short by a kill can only be the last, and is ignored. The snapshot
 * is written to a temporary file and renamed over the old one, then the journal is emptied: a
 * crash between the two replays records the snapshot already holds, which is harmless.
 */
export class StateFileRepository<T, R> {
  private readonly journalPath: string;
  private lines = 0;
  /** The journal, open for appending from the first change on. */
  private fd?: number;

  constructor(private readonly path: string) {
    this.journalPath = `${path}.journal`;
  }

  /** Records appended since the last snapshot. */
  get journalLength(): number {
    return this.lines;
  }

  load(): LoadedState<T, R> {
    const snapshot = existsSync(this.path)
      ? parse<T>(this.path, readFileSync(this.path, 'utf8'))
      : undefined;
    const records: R[] = [];
    if (existsSync(this.journalPath)) {
      const lines = readFileSync(this.journalPath, 'utf8').split('\n');
      lines.forEach((line, index) => {
        if (line === '') return;
        try {
          records.push(JSON.parse(line) as R);
        } catch (error) {
          // Only the last line can be torn (a kill mid-append): the change it held never finished.
          if (lines.slice(index + 1).some((rest) => rest !== '')) {
            throw new Error(
              `state journal ${this.journalPath} line ${index + 1} is not valid JSON`,
              {
                cause: error,
              },
            );
          }
        }
      });
    }
    this.lines = records.length;
    return { snapshot, records };
  }

  /** Appends one change. */
  append(record: R): void {
    this.fd ??= openSync(this.journalPath, 'a');
    writeSync(this.fd, `${JSON.stringify(record)}\n`);
    this.lines += 1;
  }

  /** Writes the whole state as the new snapshot and empties the journal. */
  compact(state: T): void {
    const temporary = `${this.path}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(state));
    renameSync(temporary, this.path);
    this.fd ??= openSync(this.journalPath, 'a');
    ftruncateSync(this.fd, 0);
    this.lines = 0;
  }
}

function parse<T>(path: string, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (error) {
    throw new Error(`state file ${path} is not valid JSON: ${(error as Error).message}`);
  }
}
