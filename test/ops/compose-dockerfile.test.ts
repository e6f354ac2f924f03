// Guards against a container image or compose stack that runs as root, floats on tags, or starts apps before migrations.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

const ROOT = join(__dirname, '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

/* eslint-disable @typescript-eslint/no-explicit-any -- compose is an untyped YAML tree */
type Service = Record<string, any>;

/** True for `name:tag` (not latest) or a digest; registry ports like `host:5000/x` are not tags. */
function pinned(image: string): boolean {
  if (/@sha256:[0-9a-f]{64}$/.test(image)) return true;
  const tag = image.split('/').pop()!.split(':')[1];
  return !!tag && tag !== 'latest' && !tag.includes('$');
}

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const lines = dockerfile.split('\n').map((l) => l.trim());
  const args = new Map(
    lines
      .filter((l) => l.startsWith('ARG ') && l.includes('='))
      .map((l) => l.slice(4).split('=') as [string, string]),
  );
  const froms = lines.filter((l) => /^FROM\s/i.test(l));
  const stages = dockerfile.split(/^FROM\s/im).slice(1);
  const runtime = stages[stages.length - 1];

  it('is multi-stage with pinned base images', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const from of froms) {
      const ref = from
        .split(/\s+/)[1]
        .replace(/^\$\{(\w+)\}$/, (_m, name: string) => args.get(name) ?? '');
      expect({ from, pinned: pinned(ref) }).toEqual({ from, pinned: true });
    }
  });

  it('runs the final stage as a non-root user', () => {
    const users = runtime.split('\n').filter((l) => /^USER\s/i.test(l.trim()));
    expect(users.length).toBeGreaterThan(0);
    const user = users[users.length - 1].trim().split(/\s+/)[1].split(':')[0];
    expect(['root', '0']).not.toContain(user);
  });

  it('builds with npm ci and ships production dependencies only', () => {
    expect(dockerfile).toMatch(/npm ci(?! --omit)/);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    // tsc and then the bundles the containers run (scripts/bundle-apps.ts).
    expect(dockerfile).toMatch(/^RUN npm run build$/m);
    expect(runtime).toMatch(/CMD \["node", "dist\/apps\/api\/main\.js"\]/);
    expect(runtime).not.toMatch(/npm (ci|install)(?!.*--omit=dev)/);
  });

  it('builds on Node.js 24 LTS while package.json still promises Node 20', () => {
    const image = args.get('NODE_IMAGE') ?? '';
    expect(image).toMatch(/^node:24\.\d+\.\d+-bookworm-slim$/);
    const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe('>=20');
  });

  it("labels the image with OCI annotations, its version package.json's by default", () => {
    const pkg = JSON.parse(read('package.json')) as { version: string; license: string };
    expect(args.get('VERSION')).toBe(pkg.version);
    const label = (key: string): string | undefined =>
      new RegExp(`org\\.opencontainers\\.image\\.${key}="([^"]*)"`).exec(runtime)?.[1];
    expect(label('version')).toBe('${VERSION}');
    expect(label('licenses')).toBe(pkg.license);
    expect(label('title')).toBe('mcp-task-gateway');
    expect(label('revision')).toBe('${REVISION}');
  });

  it('runs tini as PID 1, so signals reach the app and zombies are reaped', () => {
    expect(runtime).toMatch(/apt-get install -y --no-install-recommends tini/);
    expect(runtime).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--"\]$/m);
  });

  it('ships no bench, test, npm start launcher or embedded database in the runtime stage', () => {
    const copies = runtime.split('\n').filter((l) => /^COPY --from=build/.test(l.trim()));
    const sources = copies.map((l) => l.trim().split(/\s+/).at(-2));
    expect(sources.sort()).toEqual(['/app/dist/apps', '/app/dist/libs', '/app/dist/migrations']);
    expect(runtime).toMatch(/rm -rf dist\/apps\/local dist\/libs\/dev-db/);
  });

  it('keeps node_modules, dist and env files out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((l) => l.trim());
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', 'dist', '.env', '.git']));
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(read('docker-compose.yml'), { merge: true }) as {
    services: Record<string, Service>;
  };
  const services = compose.services;
  const env = (s: Service): Record<string, string> => s.environment ?? {};

  it('pins every image tag', () => {
    for (const [name, s] of Object.entries(services)) {
      expect({ name, pinned: pinned(String(s.image)) }).toEqual({ name, pinned: true });
    }
  });

  it('has postgres, migrate, api, poller, demo-server, prometheus and grafana', () => {
    expect(Object.keys(services)).toEqual(
      expect.arrayContaining([
        'postgres',
        'migrate',
        'api',
        'poller',
        'demo-server',
        'prometheus',
        'grafana',
      ]),
    );
  });

  it('runs migrate once, before the api and the pollers', () => {
    expect(services.migrate.command).toEqual(['node', 'dist/apps/cli/main.js', 'migrate']);
    expect(services.migrate.restart).toBe('no');
    expect(services.migrate.depends_on.postgres.condition).toBe('service_healthy');
    for (const app of ['api', 'poller']) {
      expect(services[app].depends_on.migrate.condition).toBe('service_completed_successfully');
    }
  });

  it('runs two pollers with more stop grace than their drain timeout', () => {
    expect(services.poller.deploy.replicas).toBe(2);
    const drainS = Number(env(services.poller).DRAIN_TIMEOUT_MS) / 1000;
    expect(parseInt(String(services.poller.stop_grace_period), 10)).toBeGreaterThan(drainS);
  });

  it('has healthchecks on the apps and the stores', () => {
    for (const name of ['postgres', 'api', 'poller', 'demo-server', 'prometheus', 'grafana']) {
      expect({ name, test: services[name].healthcheck?.test?.length > 0 }).toEqual({
        name,
        test: true,
      });
    }
    expect(JSON.stringify(services.api.healthcheck.test)).toContain(':3000/healthz/ready');
    expect(JSON.stringify(services.poller.healthcheck.test)).toContain(':9465/healthz/ready');
  });

  it('starts the demo server over HTTP and points the pollers at it', () => {
    expect(services['demo-server'].command).toEqual(
      expect.arrayContaining([
        'dist/apps/demo-server/main.js',
        '--transport',
        'http',
        '--port',
        '3001',
      ]),
    );
    const servers = JSON.parse(read('deploy/compose/mcp-servers.json')) as {
      mcpServers: Record<
        string,
        { url: string; protocolVersion?: string; taskToolsets: { name: string }[] }
      >;
    };
    const demo = Object.values(servers.mcpServers)[0];
    expect(demo.url).toBe('http://demo-server:3001/mcp');
    expect(demo.taskToolsets).toEqual([
      {
        name: 'demo-ordinary',
        contract: 'ordinary',
        submitTool: 'demo_submit',
        statusTool: 'demo_status',
        cancelTool: 'demo_cancel',
        mcp: { companionTools: true },
      },
      {
        name: 'demo-native',
        contract: 'mcp-tasks',
        tool: 'demo_task_required',
        mcp: { companionTools: true },
      },
      {
        name: 'demo-sync',
        contract: 'sync-call',
        tool: 'demo_slow',
        mcp: { companionTools: true },
      },
    ]);
    // The other servers as npm start has them: the same endpoint unpinned for the 2026-07-28
    // tasks, and the strict 2026-07-28 endpoint that refuses sessions (docs/demo-server.md).
    const { 'demo-2026': both, 'demo-strict': strict } = servers.mcpServers;
    expect([both.url, both.protocolVersion]).toEqual(['http://demo-server:3001/mcp', undefined]);
    expect([strict.url, strict.protocolVersion]).toEqual([
      'http://demo-server:3001/mcp-2026',
      undefined,
    ]);
    const local = JSON.parse(read('deploy/local/mcp-servers.json')) as typeof servers;
    const toolsets = (file: typeof servers) =>
      Object.values(file.mcpServers).flatMap((server) => server.taskToolsets.map((t) => t.name));
    expect(toolsets(servers)).toEqual(toolsets(local));
    const mount = (services.poller.volumes as string[]).find((v) => v.includes('mcp-servers.json'));
    expect(mount?.split(':')[1]).toBe(env(services.poller).MCP_SERVERS_FILE);
  });

  it('publishes ports on 127.0.0.1 unless BIND_ADDRESS says otherwise', () => {
    const published = Object.entries(services).flatMap(([name, s]) =>
      ((s.ports ?? []) as string[]).map((p) => ({ name, p })),
    );
    expect(published.length).toBeGreaterThan(0);
    for (const { name, p } of published) {
      expect({ name, p }).toEqual({
        name,
        p: expect.stringMatching(/^\$\{BIND_ADDRESS:-127\.0\.0\.1\}:\d+:\d+$/),
      });
    }
  });

  it('has no default secret: every secret variable is required (${VAR:?…})', () => {
    const text = read('docker-compose.yml');
    for (const name of ['POSTGRES_PASSWORD', 'AUTH_JWT_SECRET', 'GRAFANA_ADMIN_PASSWORD']) {
      const uses = [...text.matchAll(new RegExp(`\\$\\{${name}([^}]*)\\}`, 'g'))].map((m) => m[1]);
      expect(uses.length).toBeGreaterThan(0);
      for (const use of uses)
        expect({ name, use }).toEqual({ name, use: expect.stringMatching(/^:\?/) });
    }
    expect(text).not.toMatch(/local-dev-only/);
  });

  it('gives every long-running service a healthcheck and orders start-up by conditions', () => {
    for (const [name, s] of Object.entries(services)) {
      if (name === 'migrate') continue;
      expect({ name, healthcheck: Array.isArray(s.healthcheck?.test) }).toEqual({
        name,
        healthcheck: true,
      });
      for (const [dep, spec] of Object.entries((s.depends_on ?? {}) as Record<string, Service>)) {
        expect({ name, dep, condition: spec.condition }).toEqual({
          name,
          dep,
          condition: expect.stringMatching(/^service_(healthy|completed_successfully)$/),
        });
      }
    }
  });

  it('provisions the alert rules and the dashboard from deploy/', () => {
    const volumes = [...services.prometheus.volumes, ...services.grafana.volumes].join('\n');
    expect(volumes).toContain('./deploy/prometheus/alerts.yml');
    expect(volumes).toContain('./deploy/grafana/dashboards');
    expect(read('deploy/prometheus/prometheus.yml')).toContain('/etc/prometheus/alerts.yml');
  });
});
