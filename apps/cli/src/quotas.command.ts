import { Database, PrincipalQuota, QuotaChange, QuotaRepository } from '@app/persistence';
import { printUsage } from './command-flags';

export const QUOTAS_USAGE = `usage (output is JSON lines):
  quotas list                                   every per-user override
  quotas set USER [--max-active N|default] [--per-minute N|default]
                                                override a user's quotas (0 = unlimited;
                                                default = back to the API's setting)
  quotas clear USER                             remove every override of USER
An override applies to the user's next submit on every API replica; no restart.`;

/** Same bound as a JWT `sub` or an API key's user. */
const MAX_USER_CHARS = 255;
const FLAGS: Readonly<Record<string, keyof QuotaChange>> = {
  'max-active': 'maxActiveTasks',
  'per-minute': 'submitsPerMinute',
};

/**
 * `npm run quotas -- …`: per-user overrides of MAX_ACTIVE_TASKS_PER_USER and
 * SUBMIT_RATE_LIMIT_PER_MINUTE, kept in Postgres beside the buckets they govern.
 */
export async function runQuotasCommand(db: Database, args: string[]): Promise<void> {
  const quotas = new QuotaRepository(db);
  const [action, user, ...rest] = args;
  if (action === 'list' && user === undefined) {
    for (const row of await quotas.list()) out(view(row));
  } else if (action === 'set' && validUser(user)) {
    const change = parseChange(rest);
    if (!change || Object.keys(change).length === 0) return usage();
    const row = await quotas.set(user, change);
    out(row ? view(row) : { user, max_active_tasks: null, submits_per_minute: null });
  } else if (action === 'clear' && validUser(user) && rest.length === 0) {
    out({ user, cleared: await quotas.clear(user) });
  } else {
    usage();
  }
}

function parseChange(args: string[]): QuotaChange | null {
  const change: QuotaChange = {};
  for (let i = 0; i < args.length; i++) {
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(args[i]);
    const field = match ? FLAGS[match[1]] : undefined;
    if (!match || !field) return null;
    const value = match[2] ?? args[++i];
    if (value === 'default') change[field] = null;
    else if (value !== undefined && /^[0-9]{1,9}$/.test(value)) change[field] = Number(value);
    else return null;
  }
  return change;
}

function validUser(user: string | undefined): user is string {
  return user !== undefined && user.trim().length > 0 && user.length <= MAX_USER_CHARS;
}

function view(row: PrincipalQuota): Record<string, unknown> {
  return {
    user: row.userId,
    max_active_tasks: row.maxActiveTasks,
    submits_per_minute: row.submitsPerMinute,
    updated_at: row.updatedAt.toISOString(),
  };
}

function out(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function usage(): void {
  printUsage(QUOTAS_USAGE);
}
