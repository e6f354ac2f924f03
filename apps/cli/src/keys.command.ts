import { ApiKeyInfo, ApiKeyRepository, Database } from '@app/persistence';
import { parseFlags, printUsage } from './command-flags';

export const KEYS_USAGE = `usage:
  keys create --user USER --name NAME   create a key; it is printed once, alone on the last line
  keys list [--user USER]               list keys (never the keys themselves)
  keys revoke ID                        revoke a key (every API replica refuses it within moments)`;

/** Same rule as a JWT `sub`: the key's user is the user its requests act for. */
const MAX_FIELD_CHARS = 255;
const OPTIONS = new Set(['user', 'name']);

/**
 * `keys create|list|revoke`: the operator's API key store. A created key is printed once, alone
 * on the last line, so scripts can take it with `tail -n 1`; only its SHA-256 is stored.
 */
export async function runKeysCommand(db: Database, args: string[]): Promise<void> {
  const keys = new ApiKeyRepository(db);
  const [action, ...rest] = args;
  const flags = parseFlags(rest, OPTIONS);
  if (action === 'create' && flags) {
    const user = flags.options.user;
    const name = flags.options.name;
    if (!validField(user) || !validField(name) || flags.positional.length > 0) return usage();
    const { info, key } = await keys.create(user, name);
    out(`created API key ${info.id} for user ${info.userId} (name: ${info.name})`);
    out('it is shown only now; store it in a secret manager:');
    out(key);
  } else if (action === 'list' && flags && flags.positional.length === 0) {
    const user = flags.options.user;
    if (user !== undefined && !validField(user)) return usage();
    const list = await keys.list(user);
    out(['id', 'user', 'name', 'created_at', 'last_used_at', 'revoked_at'].join('\t'));
    for (const k of list) out(row(k));
  } else if (action === 'revoke' && flags && flags.positional.length === 1) {
    const id = flags.positional[0];
    if (await keys.revoke(id)) out(`revoked ${id}`);
    else {
      process.stderr.write(`keys: no key with ID ${id}\n`);
      process.exitCode = 1;
    }
  } else {
    usage();
  }
}

function row(k: ApiKeyInfo): string {
  const time = (d: Date | null): string => (d ? d.toISOString() : '-');
  return [k.id, k.userId, k.name, time(k.createdAt), time(k.lastUsedAt), time(k.revokedAt)].join(
    '\t',
  );
}

function validField(value: string | undefined): value is string {
  return value !== undefined && value.trim().length > 0 && value.length <= MAX_FIELD_CHARS;
}

function usage(): void {
  printUsage(KEYS_USAGE);
}

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}
