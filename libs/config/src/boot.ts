import { ConfigError, GATEWAY_VERSION } from '@app/common';

/**
 * Runs an app's bootstrap. A configuration error stops the process with its message (which
 * names the variable or field and the rule, never a value) and exit code 78 (EX_CONFIG), without
 * a stack trace; anything else is reported as a startup failure. `--version` among the
 * arguments prints `<name> <version>` and exits 0 before anything is read or connected.
 */
export function runMain(name: string, main: () => Promise<void>): void {
  if (process.argv.slice(2).includes('--version')) {
    process.stdout.write(`${name} ${GATEWAY_VERSION}\n`);
    process.exit(0);
  }
  main().catch((error: unknown) => {
    if (error instanceof ConfigError) {
      process.stderr.write(`${name}: configuration error: ${error.message}\n`);
      process.exit(78);
    }
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`${name}: failed to start: ${message}\n`);
    process.exit(1);
  });
}
