import { ChaosOptions } from './chaos-options';
import { ChaosToolset, chaosToolsets } from './chaos-toolsets';
import { SeededRandom } from './seeded-random';

/** What a task's arguments script, and so the final state the checker expects. */
export type Script = 'complete' | 'fail' | 'cancel' | 'cancel-at-once' | 'error-status';

export interface PlannedTask {
  /** Unique per task: the demo server counts submits per tag, and it is the Idempotency-Key. */
  tag: string;
  toolset: ChaosToolset;
  script: Script;
  args: Record<string, unknown>;
  /** Offset from the start of the run at which the driver submits it. */
  submitAtMs: number;
  /** Delay after the submit's answer at which the driver asks to cancel it. */
  cancelAfterMs?: number;
  expected: { status: 'completed' | 'failed' | 'cancelled'; code?: string };
}

const DURATIONS = [200, 500, 1000, 2000, 3000, 5000, 8000];

/** The run's tasks, in submit order; the same seed gives the same plan. */
export function planTasks(options: ChaosOptions, random: SeededRandom): PlannedTask[] {
  const toolsets = chaosToolsets(options.fault);
  const weights = Object.fromEntries(toolsets.map((t) => [t.name, t.weight]));
  const window = options.seconds * 1000 * 0.85;
  const tasks: PlannedTask[] = [];
  for (let i = 0; i < options.tasks; i++) {
    const name = random.weighted(weights);
    const toolset = toolsets.find((t) => t.name === name)!;
    const script = pickScript(toolset, random);
    const tag = `chaos-${options.seed}-${i}`;
    tasks.push({
      tag,
      toolset,
      script,
      args: jobArgs(toolset, script, tag, options, random),
      submitAtMs: Math.floor(random.next() * window),
      cancelAfterMs: cancelDelay(script, random),
      expected: expectedFor(script),
    });
  }
  return tasks.sort((a, b) => a.submitAtMs - b.submitAtMs);
}

function pickScript(toolset: ChaosToolset, random: SeededRandom): Script {
  // error_status is an ordinary-contract fault; it never heals in the demo server, so those
  // tasks are ended by a cancel (cancel calls are not affected by the fault).
  const errorStatus = toolset.contract === 'ordinary' ? 6 : 0;
  return random.weighted({
    complete: 62,
    fail: 14,
    cancel: 12,
    'cancel-at-once': 6,
    'error-status': errorStatus,
  });
}

function jobArgs(
  toolset: ChaosToolset,
  script: Script,
  tag: string,
  options: ChaosOptions,
  random: SeededRandom,
): Record<string, unknown> {
  const cancelled = script === 'cancel' || script === 'cancel-at-once' || script === 'error-status';
  const duration = cancelled
    ? options.cancelJobMs
    : Math.min(random.pick(DURATIONS) + random.int(0, 300), options.maxJobMs);
  const args: Record<string, unknown> = { tag, duration_ms: duration };
  if (script === 'fail') Object.assign(args, { outcome: 'fail', fail_message: `scripted ${tag}` });
  if (script === 'error-status') Object.assign(args, { fault: 'error_status' });
  if (toolset.contract === 'ordinary' && random.chance(0.3)) args.progress = true;
  if (toolset.contract === 'ordinary' && random.chance(0.1)) args.poll_after_seconds = 0.5;
  if (toolset.contract !== 'sync-call' && duration >= 2000 && random.chance(0.1)) {
    Object.assign(args, { input_required_after_ms: 500, input_required_for_ms: 700 });
  }
  return args;
}

function cancelDelay(script: Script, random: SeededRandom): number | undefined {
  if (script === 'cancel-at-once') return 0;
  if (script === 'cancel') return random.int(800, 4000);
  if (script === 'error-status') return random.int(1500, 5000);
  return undefined;
}

function expectedFor(script: Script): PlannedTask['expected'] {
  if (script === 'complete') return { status: 'completed' };
  if (script === 'fail') return { status: 'failed', code: 'upstream_failed' };
  return { status: 'cancelled' };
}
