// Guards the architecture's import boundaries: libraries never import apps, and the API never
// reaches the MCP connection layer or the drivers (only pollers talk upstream).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*|require\(\s*)['"]([^'"]+)['"]/g)].map(
    (m) => m[1],
  );
}

function violations(dir: string, forbidden: RegExp): string[] {
  return sourceFiles(join(ROOT, dir)).flatMap((file) =>
    imports(file)
      .filter((spec) => forbidden.test(spec))
      .map((spec) => `${relative(ROOT, file)} imports ${spec}`),
  );
}

it('libraries never import apps', () => {
  expect(violations('libs', /(^|\/)apps\//)).toEqual([]);
});

it('the API never imports the MCP connection layer, the drivers or the MCP SDK client', () => {
  expect(
    violations(
      'apps/api',
      /^@app\/(mcp|drivers)$|libs\/(mcp|drivers)|@modelcontextprotocol\/sdk\/client/,
    ),
  ).toEqual([]);
});

it('the connection layer and the drivers are not reachable through a library the API uses', () => {
  const apiLibs = [
    'common',
    'config',
    'persistence',
    'metrics',
    'logging',
    'views',
    'webhooks',
    'mcp-wire',
  ];
  for (const lib of apiLibs) {
    expect(violations(`libs/${lib}`, /^@app\/(mcp|drivers)$|libs\/(mcp|drivers)/)).toEqual([]);
  }
});

it('library indexes use explicit named exports, never export *', () => {
  const starred = readdirSync(join(ROOT, 'libs'))
    .map((lib) => join(ROOT, 'libs', lib, 'src', 'index.ts'))
    .filter((index) => /export \*/.test(readFileSync(index, 'utf8')));
  expect(starred).toEqual([]);
});
