// Guards against a shipped mcpServers file (npm start, docker compose, the conformance run, the
// Kubernetes example) that its own poller refuses at boot: the worst attempt chain of each
// server must fit the default LEASE_MS minus its margin (docs/leases.md, "Attempt deadlines");
// and against a shipped deployment whose held calls point clients at companion tools it does
// not offer (docs/mcp.md, "Held calls").
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { loadMcpServersFile, parseLauncherSettings } from '@app/config';

const ROOT = join(__dirname, '..', '..', '..');

function serversFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return serversFiles(path);
    return name === 'mcp-servers.json' ? [path] : [];
  });
}

const FILES = ['deploy', 'k8s'].flatMap((dir) => serversFiles(join(ROOT, dir)));
const ENV = {
  DEMO_SERVER_URL: 'http://127.0.0.1:3001/mcp',
  DEMO_SERVER_STRICT_URL: 'http://127.0.0.1:3001/mcp-2026',
  DEMO_SERVER_NODE: '/usr/bin/node',
  DEMO_SERVER_MAIN: 'dist/apps/demo-server/main.js',
  REPORTS_TOKEN: 'token',
  RESEARCH_TOKEN: 'token',
  BUILD_TOKEN: 'token',
};

it('finds the shipped files', () => {
  expect(FILES.map((path) => relative(ROOT, path)).sort()).toEqual(
    expect.arrayContaining(['deploy/local/mcp-servers.json', 'deploy/compose/mcp-servers.json']),
  );
});

it.each(FILES.map((path) => [relative(ROOT, path), path]))(
  '%s boots with the default LEASE_MS',
  (_, path) => {
    const leaseMs = parseLauncherSettings({}).lease.ms;
    expect(() => loadMcpServersFile(path, ENV, leaseMs)).not.toThrow();
  },
);

// The deployments (npm start, compose, the Kubernetes example). The conformance run serves
// fixtures under exact names, and deploy/examples is the README's bring-your-own sample.
const DEPLOYMENTS = FILES.filter(
  (path) => !/^deploy\/(conformance|examples)\//.test(relative(ROOT, path)),
);

it.each(DEPLOYMENTS.map((path) => [relative(ROOT, path), path]))(
  '%s turns the companion tools on for every exposed toolset',
  (_, path) => {
    const config = loadMcpServersFile(path, ENV, parseLauncherSettings({}).lease.ms);
    const exposed = [...config.toolsets.values()].filter((t) => t.mcp?.expose !== false);
    expect(exposed.length).toBeGreaterThan(0);
    expect(exposed.filter((t) => !t.mcp?.companionTools).map((t) => t.name)).toEqual([]);
  },
);
