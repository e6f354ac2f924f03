// Guards against the gateway losing, duplicating or mis-ending tasks when its parts crash, pause and restart.
import { NodeProcess, startNode } from '../helpers/node-process';

// A fixed seed keeps `npm test` reproducible; CHAOS_SEED explores other schedules.
const SEED = process.env.CHAOS_SEED ?? '20251125';

describe('chaos, short profile (npm run chaos -- --short)', () => {
  let run: NodeProcess | undefined;

  afterEach(async () => {
    await run?.kill('SIGKILL');
  });

  it('keeps every invariant through poller kills and pauses, a Postgres restart and upstream faults', async () => {
    run = startNode('bench/chaos/main.js', ['--short', '--seed', SEED]);
    const code = await run.exited;
    const output = [...run.lines, ...run.stderr].join('\n');
    // The summary proves the faults really happened, not just that nothing was checked.
    expect(output).toMatch(/tasks: 150 accepted/);
    expect(output).toMatch(
      /faults: poller kills 2, poller pauses 1, postgres restarts 1, upstream restarts 1, upstream hangs 1/,
    );
    expect(output).toMatch(/lease audit: \d+ updates, [1-9]\d* claims checked/);
    expect(output).toContain('CHAOS PASS: 0 violations');
    expect(code).toBe(0);
  }, 150_000);
});
