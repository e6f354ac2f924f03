// Guards against the gateway losing, duplicating or mis-ending tasks when its parts crash, pause and restart.
import { useProcesses } from '../helpers/process-scope';

// A fixed seed keeps `npm test` reproducible; CHAOS_SEED explores other schedules.
const SEED = process.env.CHAOS_SEED ?? '20251125';

/**
 * At most this share of the tasks a fault reached (the report's `tasks a fault reached`: the
 * same windows and targets the excuses use, however the task ended) may end in an excused crash
 * outcome. The share grows with the machine's load, since slower calls leave more of them in
 * flight when a fault strikes, while the count reached stays put: on the 2-core AMD EPYC machine
 * alone 13 of 100, beside six busy loops 30 of 101, inside `.ci/run` 34 (a fixed cap of 30 of
 * the 150 tasks failed that run).
 */
const HONEST_SHARE_CAP = 0.5;
/** ...and at most this many of them with no injected fault behind the excuse. */
const UNFAULTED_OUTCOMES_CAP = 5;

/** Sums the report's `honest crash outcomes: <why> <n>, ...` line. */
function honestOutcomes(output: string): { total: number; withoutFault: number } {
  const line = /honest crash outcomes: (.*)/.exec(output)?.[1] ?? 'none';
  let total = 0;
  let withoutFault = 0;
  for (const part of line === 'none' ? [] : line.split(', ')) {
    const n = Number(/ (\d+)$/.exec(part)?.[1] ?? NaN);
    expect(Number.isInteger(n)).toBe(true);
    total += n;
    if (part.includes('no injected fault')) withoutFault += n;
  }
  return { total, withoutFault };
}

describe('chaos, short profile (npm run chaos -- --short)', () => {
  // The chaos run stops after its test if it is still running.
  const processes = useProcesses({ perTest: true });

  it('keeps every invariant through poller kills and pauses, a Postgres restart and upstream faults', async () => {
    const run = processes.node('bench/chaos/main.js', ['--short', '--seed', SEED]);
    const code = await run.exited;
    const output = [...run.lines, ...run.stderr].join('\n');
    // The summary proves the faults really happened, not just that nothing was checked.
    expect(output).toMatch(/tasks: 150 accepted/);
    expect(output).toMatch(
      /faults: poller kills 2, poller pauses 1, postgres restarts 1 \(down 0 s\), upstream restarts 1, upstream hangs 1/,
    );
    expect(output).toMatch(/lease audit: \d+ updates, [1-9]\d* claims checked/);
    expect(output).toContain('CHAOS PASS: 0 violations');
    // Honest crash outcomes are excused, but not without bound: most tasks a fault reached still
    // end as scripted (the caps above say what was measured).
    const excused = honestOutcomes(output);
    const reached = Number(/tasks a fault reached: (\d+)/.exec(output)?.[1] ?? NaN);
    expect(reached).toBeGreaterThan(0);
    // Compared with the counts clamped to their caps, so a failure prints the report's summary
    // beside them: which faults excused what.
    const report = output
      .split('\n')
      .filter((line) =>
        /^(tasks|faults|duration|honest crash outcomes|tasks a fault reached):/.test(line),
      );
    expect({ ...excused, report }).toEqual({
      total: Math.min(excused.total, Math.floor(reached * HONEST_SHARE_CAP)),
      withoutFault: Math.min(excused.withoutFault, UNFAULTED_OUTCOMES_CAP),
      report,
    });
    expect(code).toBe(0);
  }, 150_000);
});
