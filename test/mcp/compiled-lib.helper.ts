// Compiles libs/mcp to plain CommonJS for fixture scripts that run in their own node process.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { transformFileSync } from '@swc/core';
import { ROOT } from './mcp-test.helper';

/** Returns the path of the compiled index.js (under .data/, which git ignores). */
export function compileMcpLib(): string {
  const source = join(ROOT, 'libs', 'mcp', 'src');
  const out = join(ROOT, '.data', `mcp-lib-${process.pid}`);
  mkdirSync(out, { recursive: true });
  for (const file of readdirSync(source)) {
    if (!file.endsWith('.ts') || file.endsWith('.spec.ts')) continue;
    const { code } = transformFileSync(join(source, file), {
      jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
      module: { type: 'commonjs' },
    });
    writeFileSync(join(out, file.replace(/\.ts$/, '.js')), code);
  }
  return join(out, 'index.js');
}
