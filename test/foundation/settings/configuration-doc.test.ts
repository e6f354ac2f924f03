// Guards against a setting the reader cannot find: a variable the apps read that
// docs/configuration.md does not list, and a README example of the mcpServers file that differs
// from the shipped one the tests boot.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { settingNames } from '@app/config';

const ROOT = join(__dirname, '..', '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/** The variables a table row of the page names in its first column. */
function documented(page: string): Set<string> {
  const names = page
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]));
  return new Set(names);
}

/** What the `npm start` launcher reads from the environment itself. */
function launcherVariables(): string[] {
  const source = read('apps/local/src/main.ts');
  return [...new Set([...source.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]))];
}

it('lists every variable the settings read', () => {
  const names = settingNames();
  expect(names.length).toBeGreaterThan(40);
  const table = documented(read('docs/configuration.md'));
  expect(names.filter((name) => !table.has(name))).toEqual([]);
});

it("lists every variable npm start's launcher reads", () => {
  const names = launcherVariables();
  expect(names).toEqual(expect.arrayContaining(['DEMO_SERVER_PORT', 'POLLER_METRICS_PORT']));
  const table = documented(read('docs/configuration.md'));
  expect(names.filter((name) => !table.has(name))).toEqual([]);
});

it('shows the shipped example mcpServers file in the README, as it is', () => {
  const readme = read('README.md');
  const section = readme.slice(readme.indexOf('## Bring your own MCP server'));
  const block = /```json\n([\s\S]*?)```/.exec(section)?.[1];
  expect(block?.trim()).toBe(read('deploy/examples/mcp-servers.json').trim());
});
