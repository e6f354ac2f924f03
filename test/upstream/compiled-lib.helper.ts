// The built libs/upstream and the fixture scripts compiled to plain CommonJS, for node processes of their own.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformFileSync } from '@swc/core';
import { fixtureFolder } from '../helpers/leftovers';
import { ROOT } from '../helpers/processes';
import { FIXTURES } from './mcp-test.helper';

const OUT = fixtureFolder(join(ROOT, '.data'), process.pid);

function compileDir(source: string, target: string): void {
  mkdirSync(target, { recursive: true });
  for (const file of readdirSync(source)) {
    if (!file.endsWith('.ts') || file.endsWith('.spec.ts')) continue;
    const { code } = transformFileSync(join(source, file), {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    });
    writeFileSync(join(target, file.replace(/\.ts$/, '.js')), code);
  }
}

/**
 * Returns the path of libs/upstream's index.js as `npm test` built it (dist/, path aliases rewritten):
 * libs/upstream imports values from other libraries, so a copy compiled on its own would not load.
 */
export function compileMcpLib(): string {
  const built = join(ROOT, 'dist', 'libs', 'upstream', 'src', 'index.js');
  if (!existsSync(built)) throw new Error(`${built} is missing: run npm run build first`);
  return built;
}

/** Returns the path of a compiled fixture script, e.g. fixture('echo-server'). */
let fixturesCompiled = false;
export function fixture(name: string): string {
  if (!fixturesCompiled) compileDir(FIXTURES, join(OUT, 'fixtures'));
  fixturesCompiled = true;
  return join(OUT, 'fixtures', `${name}.js`);
}
