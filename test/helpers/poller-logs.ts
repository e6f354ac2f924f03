import type { PollerProcess } from './processes';
import { waitUntil } from './wait';

/** One `attempt` log line of a poller: the end of one claimed item's work. */
export interface AttemptLine {
  worker: string;
  taskId: string;
  phase: string;
  outcome: string;
  /** The claim took the row from an expired lease (docs/leases.md, "Rescues first"). */
  rescued: boolean;
  /** Wall-clock start and end (ms), from the line's time and its duration. */
  start: number;
  end: number;
}

/** Every `attempt` line the given pollers logged so far. */
export function attemptLines(pollers: PollerProcess[]): AttemptLine[] {
  const out: AttemptLine[] = [];
  for (const poller of pollers) {
    for (const line of poller.logs) {
      if (line.msg !== 'attempt') continue;
      const end = Date.parse(String(line.time));
      out.push({
        worker: poller.workerId,
        taskId: String(line.task_id),
        phase: String(line.phase),
        outcome: String(line.outcome),
        rescued: line.rescued === true,
        start: end - Number(line.ms),
        end,
      });
    }
  }
  return out;
}

/**
 * Pairs of attempts on the same task by different workers whose time spans overlap: two live
 * claims of one row at once. `slackMs` absorbs log timestamp granularity.
 */
export function overlappingAttempts(
  lines: AttemptLine[],
  slackMs = 2,
): [AttemptLine, AttemptLine][] {
  const byTask = new Map<string, AttemptLine[]>();
  for (const line of lines) byTask.set(line.taskId, [...(byTask.get(line.taskId) ?? []), line]);
  const overlaps: [AttemptLine, AttemptLine][] = [];
  for (const attempts of byTask.values()) {
    attempts.sort((a, b) => a.start - b.start);
    for (let i = 0; i < attempts.length; i++) {
      for (let j = i + 1; j < attempts.length; j++) {
        const [a, b] = [attempts[i], attempts[j]];
        if (a.worker !== b.worker && b.start + slackMs < a.end - slackMs) overlaps.push([a, b]);
      }
    }
  }
  return overlaps;
}

/**
 * A task's `attempt` lines from the given pollers, once `enough` says they are all there (by
 * default: one line). A poller logs an attempt after its write commits, and its stdout reaches
 * the test later still, so a test that has just seen the row change waits for the line instead
 * of reading the logs at that instant.
 */
export async function awaitAttemptLines(
  pollers: PollerProcess[],
  taskId: string,
  enough: (lines: AttemptLine[]) => boolean = (lines) => lines.length > 0,
): Promise<AttemptLine[]> {
  return waitUntil(() => {
    const lines = attemptLines(pollers).filter((l) => l.taskId === taskId);
    return enough(lines) ? lines : undefined;
  }, `the attempt lines of ${taskId}`);
}

/**
 * Waits until each poller has logged `server` ready (connected and initialized). A poller is
 * "ready" (claiming) before its upstream connections are: an attempt claimed in between ends
 * `transient_error` and waits out the error backoff, which on a loaded machine can outlast a
 * test's deadline. Tests that count attempts or race pollers for rows wait for this first.
 */
export async function awaitUpstreamReady(pollers: PollerProcess[], server: string): Promise<void> {
  await waitUntil(
    () =>
      pollers.every((p) => p.logs.some((l) => l.server === server && l.to === 'ready'))
        ? true
        : undefined,
    () =>
      `upstream "${server}" ready on every poller; their last lines: ${JSON.stringify(
        pollers.map((p) => p.logs.slice(-6).map((l) => [l.msg, l.reason ?? l.err])),
      )}`,
    30_000,
  );
}
