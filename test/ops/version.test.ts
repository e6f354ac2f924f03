// Guards against a release whose commands do not say their version or whose help needs a database: every command's --version prints package.json's version, and `admin --help` (and its siblings) answer without DATABASE_URL.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useProcesses } from '../helpers/process-scope';

const VERSION = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
    version: string;
  }
).version;
const processes = useProcesses();

/** Runs a built app with no database in its environment; its exit code and output. */
async function run(script: string, args: string[]) {
  const child = processes.node(script, args, { DATABASE_URL: '', MCP_SERVERS_FILE: '' });
  const code = await child.exited;
  return { code, stdout: child.lines.join('\n'), stderr: child.stderr.join('\n') };
}

it.each([
  ['apps/cli/main.js', ['--version'], 'cli'],
  ['apps/cli/main.js', ['admin', '--version'], 'cli'],
  ['apps/api/main.js', ['--version'], 'api'],
  ['apps/poller/main.js', ['--version'], 'poller'],
])('%s %j prints the version', async (script, args, name) => {
  expect(await run(script, args)).toEqual({ code: 0, stdout: `${name} ${VERSION}`, stderr: '' });
});

it.each([
  ['admin', /admin stuck .*\n.*admin redrive TASK_ID/s],
  ['keys', /keys create --user USER --name NAME/],
  ['quotas', /quotas set USER/],
  ['migrate', /migrate --check/],
])('%s --help prints its usage without a database', async (command, usage) => {
  const answer = await run('apps/cli/main.js', [command, '--help']);
  expect(answer.code).toBe(0);
  expect(answer.stdout).toMatch(usage);
  expect(answer.stderr).toBe('');
});

it('an unknown command is still a usage error (exit 64)', async () => {
  const answer = await run('apps/cli/main.js', ['nonsense']);
  expect(answer.code).toBe(64);
  expect(answer.stderr).toMatch(/usage:/);
});
