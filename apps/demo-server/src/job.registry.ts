import { randomBytes } from 'node:crypto';
import type { JobArgs } from './job-args.schema';
import {
  isTerminalStatus,
  jobPhase,
  type JobPhase,
  type JobTimelineInput,
} from './job-timeline.util';
import type { StateFileRepository } from './state-file.repository';

export type JobContract = 'ordinary' | 'tasks' | 'sync';

export interface JobRecord extends JobTimelineInput {
  contract: JobContract;
  /** sync-call jobs end when the call ends (abort, crash), not by the clock. */
  syncEnd?: { status: 'completed' | 'failed' | 'cancelled'; at: number };
}

export interface Counters {
  ordinary: { submits: number; status_calls: number; cancels: number };
  tasks: { creates: number; gets: number; results: number; cancels: number };
  sync: { calls: number; completed: number; cancelled: number; failed: number };
  /** The 2026-07-28 side (SEP-2663 tasks and multi-round-trip calls). */
  tasks_2026: {
    creates: number;
    gets: number;
    updates: number;
    answers: number;
    ignored_answers: number;
    cancels: number;
    input_required_rounds: number;
  };
  tags: Record<
    string,
    { submits: number; cancels: number; last_job?: string; answers?: Record<string, number> }
  >;
}

export interface PersistedState {
  version: 1;
  jobs: JobRecord[];
  counters: Counters;
}

type CounterGroup = Exclude<keyof Counters, 'tags'>;

/** One change in the state file's journal (state-file.repository.ts): absolute values, not deltas. */
export type StateRecord =
  | { job: JobRecord }
  | { counters: CounterGroup; values: Counters[CounterGroup] }
  | { tag: string; entry: Counters['tags'][string] };

/** The journal is folded into a new snapshot once it is this long, or twice the jobs if more. */
const COMPACT_AFTER_RECORDS = 1000;

function emptyCounters(): Counters {
  return {
    ordinary: { submits: 0, status_calls: 0, cancels: 0 },
    tasks: { creates: 0, gets: 0, results: 0, cancels: 0 },
    sync: { calls: 0, completed: 0, cancelled: 0, failed: 0 },
    tasks_2026: {
      creates: 0,
      gets: 0,
      updates: 0,
      answers: 0,
      ignored_answers: 0,
      cancels: 0,
      input_required_rounds: 0,
    },
    tags: {},
  };
}

/** The trace context one request arrived with: its method, the HTTP header and `_meta`. */
export interface ReceivedTrace {
  method: string;
  header?: string;
  meta?: string;
}

/**
 * Every job of every contract plus the counters demo_stats reports. One instance per process,
 * shared by all sessions, so "submitted at most once" can be proved across reconnects; with a
 * state file it also survives a restart.
 */
export class JobRegistry {
  private readonly jobs = new Map<string, JobRecord>();
  private counters = emptyCounters();
  /** demo_slow calls being held now, and the most ever held at once (not persisted). */
  private held = { in_flight: 0, max: 0 };
  /** The latest requests' W3C trace context, header and `_meta` (not persisted). */
  private readonly traces: ReceivedTrace[] = [];

  constructor(
    private readonly stateFile?: StateFileRepository<PersistedState, StateRecord>,
    private readonly clock: () => number = Date.now,
  ) {
    if (!stateFile) return;
    const { snapshot, records } = stateFile.load();
    this.restore(snapshot, records);
    for (const job of this.jobs.values()) {
      // A sync call cannot outlive the process that held it: it ended, uncounted, at the restart.
      if (job.contract === 'sync' && !job.syncEnd) job.syncEnd = { status: 'failed', at: clock() };
    }
    if (snapshot || records.length > 0) this.save();
  }

  now(): number {
    return this.clock();
  }

  create(contract: JobContract, args: JobArgs, id?: string): JobRecord {
    const job: JobRecord = {
      id: id ?? `job_${randomBytes(12).toString('hex')}`,
      contract,
      submittedAt: this.clock(),
      args,
    };
    this.jobs.set(job.id, job);
    this.record({ job });
    if (args.tag !== undefined) {
      this.tagEntry(args.tag).last_job = job.id;
      this.recordTag(args.tag);
    }
    return job;
  }

  get(id: string): JobRecord | undefined {
    return this.jobs.get(id);
  }

  phase(job: JobRecord): JobPhase {
    if (job.syncEnd) return { status: job.syncEnd.status, since: job.syncEnd.at };
    if (job.contract === 'sync') return { status: 'running', since: job.submittedAt };
    return jobPhase(job, this.clock());
  }

  /** Records a cancel only while the job runs, so a finished job keeps its real final state. */
  cancel(job: JobRecord): JobPhase {
    if (!isTerminalStatus(this.phase(job).status)) {
      job.cancelledAt = this.clock();
      this.record({ job });
    }
    return this.phase(job);
  }

  endSync(job: JobRecord, status: 'completed' | 'failed' | 'cancelled'): void {
    job.syncEnd = { status, at: this.clock() };
    this.counters.sync[status] += 1;
    this.record({ job });
    this.record({ counters: 'sync', values: this.counters.sync });
  }

  count<C extends Exclude<keyof Counters, 'tags'>>(contract: C, key: keyof Counters[C]): void {
    (this.counters[contract] as Record<keyof Counters[C], number>)[key] += 1;
    this.record({ counters: contract, values: this.counters[contract] });
  }

  countTag(tag: string | undefined, key: 'submits' | 'cancels'): void {
    if (tag === undefined) return;
    this.tagEntry(tag)[key] += 1;
    this.recordTag(tag);
  }

  /**
   * Records that the 2026 side made task `id` with this tag (its tasks are not jobs), so
   * by_tag reports it as the tag's latest.
   */
  noteTagTask(tag: string | undefined, id: string): void {
    if (tag === undefined) return;
    this.tagEntry(tag).last_job = id;
    this.recordTag(tag);
  }

  /** Counts an answer the 2026 side accepted for input key `key`: at most one per key is right. */
  countTagAnswer(tag: string | undefined, key: string): void {
    if (tag === undefined) return;
    const entry = this.tagEntry(tag);
    const answers = (entry.answers ??= Object.create(null) as Record<string, number>);
    answers[key] = (answers[key] ?? 0) + 1;
    this.recordTag(tag);
  }

  /** `stateOf` names the state of a tag's latest task that is not a job (the 2026 side's). */
  /** Keeps what a request carried as its `traceparent`, newest last, at most 200. */
  recordTrace(trace: ReceivedTrace): void {
    this.traces.push(trace);
    if (this.traces.length > 200) this.traces.shift();
  }

  stats(tag?: string, stateOf?: (tag: string) => string | undefined): Record<string, unknown> {
    const live = [...this.jobs.values()].filter((job) => !isTerminalStatus(this.phase(job).status));
    const byTag: Record<string, unknown> = {};
    for (const [name, entry] of Object.entries(this.counters.tags)) {
      if (tag !== undefined && name !== tag) continue;
      const last = entry.last_job === undefined ? undefined : this.jobs.get(entry.last_job);
      const state = last ? this.phase(last).status : (stateOf?.(name) ?? 'unknown');
      byTag[name] = {
        submits: entry.submits,
        cancels: entry.cancels,
        cancelled: state === 'cancelled',
        state,
        ...(entry.answers ? { answers: { ...entry.answers } } : {}),
      };
    }
    const { ordinary, tasks, sync, tasks_2026 } = this.counters;
    return {
      ordinary,
      tasks,
      sync,
      tasks_2026,
      live_jobs: live.length,
      held_calls: { ...this.held },
      by_tag: byTag,
      traceparents: [...this.traces],
    };
  }

  /** Writes the whole state as the state file's snapshot (at start and at shutdown). */
  save(): void {
    this.stateFile?.compact(this.persisted());
  }

  /** The whole state, as the snapshot holds it. */
  persisted(): PersistedState {
    return { version: 1, jobs: [...this.jobs.values()], counters: this.counters };
  }

  /** Takes over a state file's snapshot, then its journal's changes in order. */
  restore(snapshot: PersistedState | undefined, records: readonly StateRecord[]): void {
    if (snapshot) {
      for (const job of snapshot.jobs) this.jobs.set(job.id, job);
      this.counters = { ...emptyCounters(), ...snapshot.counters };
    }
    for (const record of records) this.replay(record);
  }

  /** Appends one change to the state file's journal, folding it into a snapshot when long. */
  private record(change: StateRecord): void {
    const file = this.stateFile;
    if (!file) return;
    file.append(change);
    if (file.journalLength > Math.max(COMPACT_AFTER_RECORDS, 2 * this.jobs.size)) this.save();
  }

  private recordTag(tag: string): void {
    this.record({ tag, entry: this.tagEntry(tag) });
  }

  /** Applies one journal record over the snapshot (a record replayed twice changes nothing). */
  private replay(change: StateRecord): void {
    if ('job' in change) {
      this.jobs.set(change.job.id, change.job);
    } else if ('counters' in change) {
      this.counters = { ...this.counters, [change.counters]: change.values };
    } else {
      const entry = this.tagEntry(change.tag);
      const { answers, ...rest } = change.entry;
      Object.assign(entry, rest);
      // Keys are caller-chosen: kept on an object without a prototype, as countTagAnswer makes.
      if (answers) entry.answers = Object.assign(Object.create(null), answers) as typeof answers;
    }
  }

  /** A demo_slow call began: it is held open until {@link heldCallEnded}. */
  heldCallStarted(): void {
    this.held.in_flight += 1;
    this.held.max = Math.max(this.held.max, this.held.in_flight);
  }

  heldCallEnded(): void {
    this.held.in_flight -= 1;
  }

  /** Own-property checks because tags are caller-chosen strings ("__proto__" included). */
  private tagEntry(tag: string): Counters['tags'][string] {
    const tags = this.counters.tags;
    if (!Object.hasOwn(tags, tag)) {
      Object.defineProperty(tags, tag, {
        value: { submits: 0, cancels: 0 },
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return tags[tag];
  }
}
