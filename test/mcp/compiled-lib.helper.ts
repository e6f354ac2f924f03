// Compiles libs/mcp and the fixture scripts to plain CommonJS, for node processes of their own.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformFileSync } from '@swc/core';
import { FIXTURES, ROOT } from './mcp-test.helper';

const OUT = join(ROOT, '.data', `mcp-test-${process.pid}`);

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

/** Returns the path of the compiled libs/mcp index.js (under .data/, which git ignores). */
export function compileMcpLib(): string {
  compileDir(join(ROOT, 'libs', 'mcp', 'src'), join(OUT, 'lib'));
  return join(OUT, 'lib', 'index.js');
}

/** Returns the path of a compiled fixture script, e.g. fixture('echo-server'). */
let fixturesCompiled = false;
export function fixture(name: string): string {
  if (!fixturesCompiled) compileDir(FIXTURES, join(OUT, 'fixtures'));
  fixturesCompiled = true;
  return join(OUT, 'fixtures', `${name}.js`);
}
