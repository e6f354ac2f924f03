/** A command's options by name, and its other words in order. */
export interface CommandFlags {
  options: Record<string, string>;
  positional: string[];
}

/**
 * Splits a command's words: `--name value` or `--name=value` for each name in `allowed`, any
 * other word positional. Null (a usage error) for an option not allowed or without a value.
 */
export function parseFlags(args: string[], allowed: ReadonlySet<string>): CommandFlags | null {
  const options: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const match = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    if (!match || !allowed.has(match[1])) return null;
    const value = match[2] ?? args[++i];
    if (value === undefined) return null;
    options[match[1]] = value;
  }
  return { options, positional };
}

/** The usage text on stderr and exit code 64 (EX_USAGE), as every command answers bad words. */
export function printUsage(usage: string): void {
  process.stderr.write(`${usage}\n`);
  process.exitCode = 64;
}
