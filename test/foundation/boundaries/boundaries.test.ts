// Guards the architecture's import boundaries: libraries never import apps, the API never
// reaches the MCP connection layer or the drivers (only pollers talk upstream), and no app or
// library gains an import edge that is not on the pinned list below.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [
    ...text.matchAll(/(?:from\s+|import\s+|import\s*\(\s*|require\(\s*)['"]([^'"]+)['"]/g),
  ].map((m) => m[1]);
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
      /^@app\/(upstream|drivers)$|libs\/(upstream|drivers)|@modelcontextprotocol\/sdk\/client/,
    ),
  ).toEqual([]);
});

it('the connection layer and the drivers are not reachable through a library the API uses', () => {
  const apiLibs = [
    'common',
    'config',
    'lifecycle',
    'persistence',
    'metrics',
    'logging',
    'views',
    'webhooks',
    'wire',
  ];
  for (const lib of apiLibs) {
    expect(
      violations(`libs/${lib}`, /^@app\/(upstream|drivers)$|libs\/(upstream|drivers)/),
    ).toEqual([]);
  }
});

it('library indexes use explicit named exports, never export *', () => {
  const starred = readdirSync(join(ROOT, 'libs'))
    .map((lib) => join(ROOT, 'libs', lib, 'src', 'index.ts'))
    .filter((index) => /export \*/.test(readFileSync(index, 'utf8')));
  expect(starred).toEqual([]);
});

/**
 * Which app or library may import which, as of today. A new edge fails the test: add it here
 * only after deciding it belongs (libraries never import apps; the API never reaches libs/upstream or
 * libs/drivers). The drivers never import libs/persistence: what they hand the store (a remote
 * handle, a published toolset) is vocabulary in libs/common. No library reaches outside libs/:
 * the apps that migrate or check the schema import migrations/ and hand the list to
 * libs/persistence. The one exception is libs/common's version.ts, which reads `version` from
 * the repository's package.json, the one place the version is written.
 */
const ALLOWED_EDGES: Record<string, string[]> = {
  'apps/api': [
    'libs/common',
    'libs/config',
    'libs/lifecycle',
    'libs/logging',
    'libs/wire',
    'libs/metrics',
    'libs/persistence',
    'libs/tracing',
    'libs/views',
    'libs/webhooks',
    'migrations',
  ],
  'apps/cli': ['libs/common', 'libs/config', 'libs/persistence', 'migrations'],
  'apps/demo-server': ['libs/common', 'libs/wire'],
  'apps/local': ['libs/config', 'libs/dev-db', 'libs/persistence', 'migrations'],
  'apps/poller': [
    'libs/common',
    'libs/config',
    'libs/drivers',
    'libs/leasing',
    'libs/lifecycle',
    'libs/logging',
    'libs/upstream',
    'libs/metrics',
    'libs/persistence',
    'libs/tracing',
    'libs/webhooks',
    'migrations',
  ],
  'libs/common': ['package.json'],
  'libs/config': ['libs/common'],
  'libs/dev-db': [],
  'libs/drivers': ['libs/common', 'libs/config', 'libs/upstream'],
  'libs/leasing': [],
  'libs/lifecycle': [],
  'libs/logging': [],
  'libs/upstream': ['libs/common', 'libs/config', 'libs/wire', 'libs/tracing'],
  'libs/wire': ['libs/common'],
  'libs/metrics': ['libs/lifecycle'],
  'libs/persistence': ['libs/common'],
  'libs/tracing': [],
  'libs/views': ['libs/common', 'libs/persistence'],
  'libs/webhooks': [
    'libs/leasing',
    'libs/metrics',
    'libs/persistence',
    'libs/tracing',
    'libs/views',
  ],
};

/** `apps/x` or `libs/x` for a path inside one, else the top-level folder (e.g. `scripts`). */
function unitOf(path: string): string {
  const parts = relative(ROOT, path).split(sep);
  return parts[0] === 'apps' || parts[0] === 'libs' ? parts.slice(0, 2).join('/') : parts[0];
}

/** Every `from -> to` edge between apps, libraries and top-level folders, specs excluded. */
function importEdges(): string[] {
  const edges = new Set<string>();
  for (const top of ['apps', 'libs']) {
    for (const unit of readdirSync(join(ROOT, top))) {
      const from = `${top}/${unit}`;
      for (const file of sourceFiles(join(ROOT, from))) {
        if (file.endsWith('.spec.ts')) continue;
        for (const spec of imports(file)) {
          let to: string | undefined;
          if (spec.startsWith('@app/')) to = `libs/${spec.slice(5).split('/')[0]}`;
          else if (spec.startsWith('.')) to = unitOf(resolve(dirname(file), spec));
          if (to !== undefined && to !== from) edges.add(`${from} -> ${to}`);
        }
      }
    }
  }
  return [...edges].sort();
}

it('no app or library imports one its pinned edges do not list', () => {
  const allowed = new Set(
    Object.entries(ALLOWED_EDGES).flatMap(([from, tos]) => tos.map((to) => `${from} -> ${to}`)),
  );
  expect(importEdges().filter((edge) => !allowed.has(edge))).toEqual([]);
});

it('every app and library has a pinned entry', () => {
  const units = ['apps', 'libs'].flatMap((top) =>
    readdirSync(join(ROOT, top)).map((unit) => `${top}/${unit}`),
  );
  expect(units.filter((unit) => !(unit in ALLOWED_EDGES))).toEqual([]);
});
