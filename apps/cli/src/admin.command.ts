import { userInfo } from 'node:os';
import { TASK_ID_PATTERN } from '@app/common';
import { Database, OperatorActor, OperatorRepository, OperatorResult } from '@app/persistence';
import { parseFlags, printUsage } from './command-flags';

export const ADMIN_USAGE = `usage (every command takes --actor NAME, default the OS user; output is JSON lines):
  admin stuck [--status S] [--server NAME] [--older-than SECONDS] [--limit N]
                                  non-terminal tasks older than SECONDS (default 300)
  admin redrive TASK_ID [--reason TEXT]     make a task due now
  admin fail TASK_ID --reason TEXT          end a task failed_by_operator
  admin dead-letters [--limit N]            dead-lettered webhook deliveries
  admin replay DELIVERY_ID [--reason TEXT]  queue a dead-lettered delivery again, due now
  admin actions [--limit N]                 the operator action log, newest first
A write on a task a poller holds a live lease on is refused (exit 5): retry once it ended.`;

const OPTIONS = new Set(['status', 'server', 'older-than', 'limit', 'reason', 'actor']);
const STATUSES = new Set(['queued', 'working', 'input_required']);
const MAX_REASON_CHARS = 1000;

/** Exit codes: 0 done, 4 no such task or delivery, 5 refused (leased, terminal, not dead). */
const EXIT: Record<OperatorResult['outcome'], number> = {
  ok: 0,
  not_found: 4,
  leased: 5,
  terminal: 5,
  not_dead: 5,
};

/**
 * `npm run admin -- …`: the operator commands of docs/operations.md ("Operator commands"), the
 * same as the API's admin routes. Writes are recorded in the operator action log.
 */
export async function runAdminCommand(db: Database, args: string[]): Promise<void> {
  const repo = new OperatorRepository(db);
  const [action, ...rest] = args;
  const flags = parseFlags(rest, OPTIONS);
  if (!flags) return usage();
  const { options, positional } = flags;
  const actor: OperatorActor = { name: options.actor ?? osUser(), via: 'cli' };
  const limit = intOption(options.limit, 50);
  const reason = options.reason ?? null;
  if (
    limit === null ||
    (reason !== null && (reason.length === 0 || reason.length > MAX_REASON_CHARS))
  )
    return usage();
  if (action === 'stuck' && positional.length === 0) {
    const olderThan = intOption(options['older-than'], 300);
    if (olderThan === null || (options.status !== undefined && !STATUSES.has(options.status)))
      return usage();
    const rows = await repo.listStuck({
      status: options.status,
      server: options.server,
      olderThanSeconds: olderThan,
      limit,
    });
    for (const row of rows) out(row);
  } else if ((action === 'redrive' || action === 'fail') && positional.length === 1) {
    const taskId = positional[0];
    if (!TASK_ID_PATTERN.test(taskId)) return usage(`not a task ID: ${taskId}`);
    if (action === 'fail' && reason === null) return usage('fail needs --reason');
    const result =
      action === 'redrive'
        ? await repo.redrive(actor, taskId, reason)
        : await repo.forceFail(actor, taskId, reason ?? '');
    report(result);
  } else if (action === 'dead-letters' && positional.length === 0) {
    for (const row of await repo.listDeadDeliveries(limit)) out(row);
  } else if (action === 'replay' && positional.length === 1) {
    const id = positional[0];
    if (!/^[1-9][0-9]{0,17}$/.test(id)) return usage(`not a delivery ID: ${id}`);
    report(await repo.replayDelivery(actor, id, reason));
  } else if (action === 'actions' && positional.length === 0) {
    for (const row of await repo.listActions(limit)) out(row);
  } else {
    usage();
  }
}

function report(result: OperatorResult): void {
  out({ outcome: result.outcome, detail: result.detail, action_id: result.actionId });
  process.exitCode = EXIT[result.outcome];
}

function out(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function usage(problem?: string): void {
  if (problem) process.stderr.write(`admin: ${problem}\n`);
  printUsage(ADMIN_USAGE);
}

function osUser(): string {
  try {
    return userInfo().username || 'unknown';
  } catch {
    return process.env.USER ?? 'unknown';
  }
}

function intOption(value: string | undefined, fallback: number): number | null {
  if (value === undefined) return fallback;
  return /^[0-9]{1,9}$/.test(value) ? Number(value) : null;
}
