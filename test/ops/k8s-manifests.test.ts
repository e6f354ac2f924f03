// Guards against Kubernetes manifests that deploy unsafely or silently stop matching each other.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { runTool, toolAvailable } from '../helpers/external-tool';

const ROOT = join(__dirname, '..', '..');
const K8S = join(ROOT, 'k8s');

/* eslint-disable @typescript-eslint/no-explicit-any -- manifests are untyped YAML trees */
type Doc = Record<string, any>;
interface Manifest {
  file: string;
  doc: Doc;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

const yamlFiles = walk(K8S).filter((f) => /\.ya?ml$/.test(f));
const manifests: Manifest[] = yamlFiles
  .filter((f) => !f.endsWith('kustomization.yaml'))
  .flatMap((file) =>
    parseAllDocuments(readFileSync(file, 'utf8')).map((d) => {
      if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0].message}`);
      return { file: relative(ROOT, file), doc: d.toJS() as Doc };
    }),
  )
  .filter((m) => m.doc !== null);
// The base (with the optional Prometheus Operator component) is what gets deployed; examples
// and overlays are checked for syntax above only.
const base = manifests.filter(
  (m) =>
    (m.file.startsWith('k8s/base/') || m.file.startsWith('k8s/components/')) &&
    !m.file.includes('.example.'),
);
const ofKind = (kind: string): Doc[] => base.filter((m) => m.doc.kind === kind).map((m) => m.doc);
const deployments = ofKind('Deployment');
const workloads = [...deployments, ...ofKind('Job')];
const podSpec = (w: Doc): Doc => w.spec.template.spec;
const containersOf = (w: Doc): Doc[] => [
  ...(podSpec(w).initContainers ?? []),
  ...(podSpec(w).containers ?? []),
];
const matches = (selector: Record<string, string>, labels: Record<string, string> = {}): boolean =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);
const byComponent = (c: string): Doc =>
  deployments.find((d) => d.metadata.labels['app.kubernetes.io/component'] === c)!;

describe('k8s workloads', () => {
  it('include a migrate Job, an API and a poller Deployment', () => {
    const job = ofKind('Job').find((j) =>
      JSON.stringify(podSpec(j).containers).includes('migrate'),
    );
    expect(job).toBeDefined();
    expect(byComponent('api')).toBeDefined();
    expect(byComponent('poller').spec.replicas).toBe(3);
  });

  it.each(workloads.map((w) => [w.metadata.name, w]))('%s runs as non-root', (_n, w) => {
    expect(podSpec(w).securityContext?.runAsNonRoot).toBe(true);
    expect(podSpec(w).securityContext?.runAsUser).toBeGreaterThan(0);
  });

  it.each(workloads.map((w) => [w.metadata.name, w]))(
    '%s: every container has requests, limits, a read-only root and a pinned image',
    (_n, w) => {
      for (const c of containersOf(w)) {
        for (const kind of ['requests', 'limits']) {
          expect({
            c: c.name,
            kind,
            cpu: !!c.resources?.[kind]?.cpu,
            mem: !!c.resources?.[kind]?.memory,
          }).toEqual({ c: c.name, kind, cpu: true, mem: true });
        }
        expect(c.securityContext?.readOnlyRootFilesystem).toBe(true);
        expect(c.securityContext?.allowPrivilegeEscalation).toBe(false);
        const image = String(c.image);
        const tag = /@sha256:[0-9a-f]{64}$/.test(image)
          ? 'digest'
          : image.split('/').pop()!.split(':')[1];
        expect({ image, tagged: !!tag && tag !== 'latest' }).toEqual({ image, tagged: true });
        // A read-only root still needs a writable /tmp (Node, npx, temp files).
        const tmp = (c.volumeMounts ?? []).find((m: Doc) => m.mountPath === '/tmp');
        const volume = (podSpec(w).volumes ?? []).find((v: Doc) => v.name === tmp?.name);
        expect({ c: c.name, tmpEmptyDir: !!volume?.emptyDir }).toEqual({
          c: c.name,
          tmpEmptyDir: true,
        });
      }
    },
  );

  it.each(deployments.map((d) => [d.metadata.name, d]))(
    '%s: every container has liveness and readiness probes on a declared port',
    (_n, d) => {
      for (const c of podSpec(d).containers as Doc[]) {
        const ports = new Map<string | number, number>(
          (c.ports ?? []).flatMap((p: Doc) => [
            [p.name, p.containerPort],
            [p.containerPort, p.containerPort],
          ]),
        );
        expect(c.livenessProbe?.httpGet?.path).toBe('/healthz/live');
        expect(c.readinessProbe?.httpGet?.path).toBe('/healthz/ready');
        for (const probe of [c.livenessProbe, c.readinessProbe]) {
          expect(ports.has(probe.httpGet.port)).toBe(true);
        }
      }
    },
  );

  it('probes the API on its API port and the poller on its metrics port', () => {
    const port = (d: Doc): number => {
      const c = podSpec(d).containers[0];
      const named = c.readinessProbe.httpGet.port;
      return c.ports.find((p: Doc) => p.name === named || p.containerPort === named).containerPort;
    };
    expect(port(byComponent('api'))).toBe(3000);
    expect(port(byComponent('poller'))).toBe(9465);
  });

  it('gives the poller its drain timeout plus 10 s for closing as grace (docs/leases.md)', () => {
    const poller = byComponent('poller');
    const env = (podSpec(poller).containers[0].env ?? []) as Doc[];
    const drainMs = Number(env.find((e) => e.name === 'DRAIN_TIMEOUT_MS')?.value);
    expect(drainMs).toBeGreaterThan(0);
    expect(podSpec(poller).terminationGracePeriodSeconds).toBeGreaterThanOrEqual(
      drainMs / 1000 + 10,
    );
  });

  it('gives the API its shutdown delay, 30 s for requests in flight and 5 s for closing as grace', () => {
    const api = byComponent('api');
    const env = (podSpec(api).containers[0].env ?? []) as Doc[];
    const delayMs = Number(env.find((e) => e.name === 'SHUTDOWN_DELAY_MS')?.value);
    expect(delayMs).toBeGreaterThan(0);
    expect(podSpec(api).terminationGracePeriodSeconds).toBeGreaterThanOrEqual(
      delayMs / 1000 + 30 + 5,
    );
  });

  it.each(workloads.map((w) => [w.metadata.name, w]))(
    '%s sets args, never command, so the image entrypoint (tini) stays PID 1',
    (_n, w) => {
      for (const c of containersOf(w)) {
        expect({ c: c.name, command: c.command, args: Array.isArray(c.args) }).toEqual({
          c: c.name,
          command: undefined,
          args: true,
        });
      }
    },
  );

  it('spreads API replicas over nodes and zones', () => {
    const keys = (podSpec(byComponent('api')).topologySpreadConstraints ?? []).map(
      (t: Doc) => t.topologyKey,
    );
    expect(keys).toEqual(['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
  });

  it('stays inside the documented database connection budget at the HPA maximum', () => {
    // Every pod holds its pool plus one LISTEN connection; a rollout adds maxSurge pods.
    const perPod = (d: Doc): number => {
      const env = (podSpec(d).containers[0].env ?? []) as Doc[];
      const pool = Number(env.find((e) => e.name === 'DATABASE_POOL_SIZE')?.value ?? 10);
      return pool + 1;
    };
    const hpa = ofKind('HorizontalPodAutoscaler')[0];
    const api = byComponent('api');
    const poller = byComponent('poller');
    const surge = (d: Doc): number => Number(d.spec.strategy.rollingUpdate.maxSurge);
    const total =
      (hpa.spec.maxReplicas + surge(api)) * perPod(api) +
      (poller.spec.replicas + surge(poller)) * perPod(poller) +
      2; // the migrate Job
    const docs = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    const documented = /budget: \*\*(\d+)\*\* connections/.exec(docs);
    expect(Number(documented?.[1])).toBe(total);
    // Postgres's default max_connections (100) minus its 3 superuser-reserved slots.
    expect(total).toBeLessThanOrEqual(97);
  });

  it('makes every app wait for the migrate Job before its main container starts', () => {
    for (const d of deployments) {
      const init = (podSpec(d).initContainers ?? []).map((c: Doc) => (c.args ?? []).join(' '));
      expect({
        d: d.metadata.name,
        waits: init.includes('node dist/apps/cli/main.js migrate --wait'),
      }).toEqual({
        d: d.metadata.name,
        waits: true,
      });
    }
    const job = ofKind('Job')[0];
    expect(job.spec.activeDeadlineSeconds).toBeGreaterThan(0);
    expect(job.metadata.annotations['argocd.argoproj.io/sync-wave']).toBe('0');
    for (const d of deployments) {
      expect(Number(d.metadata.annotations['argocd.argoproj.io/sync-wave'])).toBeGreaterThan(0);
    }
  });
});

describe('k8s selectors', () => {
  it.each(deployments.map((d) => [d.metadata.name, d]))(
    '%s has a PodDisruptionBudget selecting its pods and no others',
    (_n, d) => {
      const pdbs = ofKind('PodDisruptionBudget').filter((p) =>
        matches(p.spec.selector.matchLabels, d.spec.template.metadata.labels),
      );
      expect(pdbs).toHaveLength(1);
      // A pod that is not ready protects nothing; blocking its eviction hangs node drains.
      expect(pdbs[0].spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
      const others = deployments.filter(
        (o) =>
          o !== d && matches(pdbs[0].spec.selector.matchLabels, o.spec.template.metadata.labels),
      );
      expect(others).toEqual([]);
    },
  );

  it('has an HPA targeting the API Deployment', () => {
    const hpa = ofKind('HorizontalPodAutoscaler')[0];
    expect(hpa.spec.scaleTargetRef.name).toBe(byComponent('api').metadata.name);
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2);
  });

  it('points each ServiceMonitor at a named port of a Service that reaches a container port', () => {
    const monitors = ofKind('ServiceMonitor');
    expect(monitors.map((m) => m.metadata.name).sort()).toEqual([
      'mcp-task-gateway-api',
      'mcp-task-gateway-poller',
    ]);
    for (const monitor of monitors) {
      const services = ofKind('Service').filter((s) =>
        matches(monitor.spec.selector.matchLabels, s.metadata.labels),
      );
      expect(services.length).toBeGreaterThan(0);
      for (const endpoint of monitor.spec.endpoints as Doc[]) {
        for (const service of services) {
          const port = (service.spec.ports as Doc[]).find((p) => p.name === endpoint.port);
          expect({ monitor: monitor.metadata.name, port: endpoint.port, found: !!port }).toEqual({
            monitor: monitor.metadata.name,
            port: endpoint.port,
            found: true,
          });
          const pods = deployments.filter((d) =>
            matches(service.spec.selector, d.spec.template.metadata.labels),
          );
          expect(pods.length).toBeGreaterThan(0);
          for (const pod of pods) {
            const names = podSpec(pod).containers.flatMap((c: Doc) =>
              (c.ports ?? []).map((p: Doc) => p.name),
            );
            expect(names).toContain(port!.targetPort);
          }
        }
      }
    }
  });
});

describe('kustomize', () => {
  const dirs = yamlFiles.filter((f) => f.endsWith('kustomization.yaml')).map((f) => join(f, '..'));
  // Components are built through the overlays that include them, not on their own.
  const buildable = dirs.filter(
    (d) => !readFileSync(join(d, 'kustomization.yaml'), 'utf8').includes('kind: Component'),
  );

  it.each(dirs.map((d) => [relative(ROOT, d), d]))(
    '%s lists every file in its directory',
    (_n, dir) => {
      const k = parseAllDocuments(
        readFileSync(join(dir, 'kustomization.yaml'), 'utf8'),
      )[0].toJS() as Doc;
      const generators = [...(k.configMapGenerator ?? []), ...(k.secretGenerator ?? [])] as Doc[];
      const referenced = new Set<string>([
        ...(k.resources ?? []),
        ...(k.components ?? []),
        ...generators.flatMap((g) => [...(g.files ?? []), ...(g.envs ?? [])]),
        ...((k.patches ?? []) as Doc[]).flatMap((p) => (p.path ? [p.path] : [])),
      ]);
      const local = readdirSync(dir).filter((f) => statSync(join(dir, f)).isFile());
      for (const file of local.filter((f) => f !== 'kustomization.yaml')) {
        // Example files hold placeholders and must never be applied.
        expect({ file, listed: referenced.has(file) }).toEqual({
          file,
          listed: !file.includes('.example.'),
        });
      }
      for (const ref of referenced)
        expect({ ref, exists: existsSync(join(dir, ref)) }).toEqual({ ref, exists: true });
    },
  );

  const kubectl = toolAvailable('kubectl', ['version', '--client']);
  (kubectl ? it.each : it.skip.each)(buildable.map((d) => [relative(ROOT, d), d]))(
    '%s builds with kubectl kustomize',
    (_n, dir) => {
      const run = runTool('kubectl', ['kustomize', dir], ROOT);
      expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: '' });
      expect(run.stdout).toContain('kind: Deployment');
    },
  );

  (kubectl ? it : it.skip)('the example overlay includes the Prometheus Operator component', () => {
    const out = runTool('kubectl', ['kustomize', join(K8S, 'overlays', 'example')], ROOT).stdout;
    expect(out).toContain('kind: PrometheusRule');
    expect(out).toContain('kind: ServiceMonitor');
    const baseOnly = runTool('kubectl', ['kustomize', join(K8S, 'base')], ROOT).stdout;
    expect(baseOnly).not.toContain('monitoring.coreos.com');
  });
});
