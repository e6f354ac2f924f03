// Guards against dashboard panels and alert rules that query metrics the code does not export.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { METRIC_DEFINITIONS, METRIC_NAMES, MetricsService } from '@app/metrics';
import { renderPrometheusRule } from '../../scripts/prometheus-rule.renderer';

const ROOT = join(__dirname, '..', '..');
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8');

interface Panel {
  id: number;
  type: string;
  title: string;
  description?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
  fieldConfig?: { defaults?: { thresholds?: { steps?: unknown[] } } };
}
interface Variable {
  name: string;
  type: string;
  query?: unknown;
}
interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const dashboard = JSON.parse(read('deploy/grafana/dashboards/mcp-task-gateway.json')) as {
  panels: Panel[];
  templating: { list: Variable[] };
};
const alerts = parse(read('deploy/prometheus/alerts.yml')) as { groups: { rules: Rule[] }[] };
const rules = alerts.groups.flatMap((g) => g.rules);

/** Where docs/operations.md puts the runbook of an alert of each severity. */
const SEVERITY_SECTION: Record<string, string> = {
  critical: 'Critical alerts (page)',
  warning: 'Warning alerts (ticket)',
};

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Every heading's anchor in a Markdown page, mapped to the `##` section it sits in. */
function runbookSections(markdown: string): Map<string, string> {
  const sections = new Map<string, string>();
  let section = '';
  for (const line of markdown.split('\n')) {
    const m = /^(#{2,6})\s+(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === '##') section = m[2].trim();
    sections.set(anchorOf(m[2]), section);
  }
  return sections;
}
const panels = dashboard.panels
  .flatMap((p) => [p, ...(p.panels ?? [])])
  .filter((p) => p.type !== 'row');
const panelExprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr ?? ''));

const SELECTOR_FUNCTIONS = /\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g;
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/** Metric names in a PromQL expression: identifiers that are not functions, keywords or labels. */
function metricNamesIn(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(SELECTOR_FUNCTIONS, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const rest = stripped.slice(m.index + m[0].length).trimStart();
    if (rest.startsWith('(') || KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

// Everything a real process registers (gateway metrics plus prom-client's defaults), with the
// series suffixes histograms expose, plus `up`, which Prometheus adds to every target.
const registry = new MetricsService().registry;
const exported = new Set<string>(['up']);
for (const metric of registry.getMetricsAsArray()) {
  exported.add(metric.name);
  if (metric.constructor.name === 'Histogram' || metric.constructor.name === 'Summary') {
    for (const suffix of ['_bucket', '_sum', '_count']) exported.add(metric.name + suffix);
  }
}

describe('PromQL metric extraction', () => {
  it('finds metric names and ignores functions, labels and ranges', () => {
    expect(
      metricNamesIn(
        'histogram_quantile(0.99, sum by (le, route) (rate(foo_bucket{a="b"}[5m]))) / on (x) bar or absent(up{job="p"} == 1)',
      ).sort(),
    ).toEqual(['bar', 'foo_bucket', 'up']);
  });
});

/**
 * Every metric selector in `expr` with its label matchers: `name{...}`, or `name` alone (then
 * with no matchers at all, which is what the scoping test must catch).
 */
function selectorsIn(expr: string): { metric: string; matchers: string }[] {
  const metrics = new Set(metricNamesIn(expr));
  const found: { metric: string; matchers: string }[] = [];
  for (const m of expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?/g)) {
    if (!metrics.has(m[1])) continue;
    const before = expr.slice(0, m.index);
    // Skip label names inside a matcher list or a by(...) clause that share a metric's name.
    if (/\{[^}]*$/.test(before)) continue;
    found.push({ metric: m[1], matchers: m[2] ?? '' });
  }
  return found;
}

const SCOPE = ['namespace=~"$namespace"', 'job=~"$job"', 'instance=~"$instance"'];

describe('Grafana dashboard scoped to one installation', () => {
  it('defines namespace, job and instance variables from a gateway metric', () => {
    const vars = new Map(dashboard.templating.list.map((v) => [v.name, v]));
    for (const name of ['namespace', 'job', 'instance']) {
      expect({ name, type: vars.get(name)?.type }).toEqual({ name, type: 'query' });
      expect(JSON.stringify(vars.get(name)?.query)).toContain('mcp_tasks_');
    }
  });

  it('scopes every metric selector of every query with all three variables', () => {
    const unscoped = panels.flatMap((p) =>
      (p.targets ?? []).flatMap((t) =>
        selectorsIn(t.expr ?? '')
          .filter((s) => !SCOPE.every((m) => s.matchers.includes(m)))
          .map((s) => `${p.title}: ${s.metric}${s.matchers}`),
      ),
    );
    expect(unscoped).toEqual([]);
  });

  it('finds unscoped selectors (the check above can fail)', () => {
    expect(selectorsIn('sum(rate(foo_total{job=~"$job"}[5m])) / bar').map((s) => s.metric)).toEqual(
      ['foo_total', 'bar'],
    );
  });

  it('describes every panel and gives every panel thresholds', () => {
    const missing = panels
      .filter((p) => !p.description?.trim() || !p.fieldConfig?.defaults?.thresholds?.steps?.length)
      .map((p) => p.title);
    expect(missing).toEqual([]);
  });

  it('has per-toolset and per-server views and webhook delivery health', () => {
    const rows = dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title);
    expect(rows).toEqual(
      expect.arrayContaining(['Per toolset ($toolset)', 'Per server ($server)', 'Webhooks']),
    );
    const webhook = panelExprs.filter(
      (e) => e.includes('mcp_tasks_webhook_') || e.includes('deliver'),
    );
    expect(webhook.length).toBeGreaterThanOrEqual(4);
    expect(panelExprs.some((e) => e.includes('toolset=~"$toolset"'))).toBe(true);
    expect(panelExprs.some((e) => e.includes('server=~"$server"'))).toBe(true);
  });
});

describe('Grafana dashboard', () => {
  it('has panels, each with at least one non-empty query', () => {
    expect(panels.length).toBeGreaterThan(10);
    for (const panel of panels) {
      const exprs = (panel.targets ?? []).map((t) => t.expr?.trim() ?? '');
      expect({
        panel: panel.title,
        ok: exprs.length > 0 && exprs.every((e) => e.length > 0),
      }).toEqual({ panel: panel.title, ok: true });
    }
  });

  it('has unique panel ids (Grafana silently merges duplicates)', () => {
    const ids = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]).map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('queries only metrics the code exports', () => {
    const unknown = panelExprs.flatMap(metricNamesIn).filter((n) => !exported.has(n));
    expect(unknown).toEqual([]);
  });

  it('shows every gateway metric somewhere', () => {
    const used = new Set(
      panelExprs.flatMap(metricNamesIn).map((n) => n.replace(/_(bucket|sum|count)$/, '')),
    );
    expect(METRIC_NAMES.filter((n) => !used.has(n))).toEqual([]);
  });
});

describe('Prometheus alert rules', () => {
  it('query only metrics the code exports', () => {
    const unknown = rules.flatMap((r) => metricNamesIn(r.expr)).filter((n) => !exported.has(n));
    expect(unknown).toEqual([]);
  });

  it.each([
    ['backlog growing', 'mcp_tasks_backlog'],
    ['oldest due age', 'mcp_tasks_oldest_due_age_seconds'],
    ['no live poller', 'mcp_tasks_workers_alive'],
    ['no live poller (scrape)', 'up'],
    ['upstream parked', 'mcp_tasks_upstream_state'],
    ['webhook dead letters', 'mcp_tasks_webhook_dead_letters_total'],
    ['lease losses', 'mcp_tasks_lease_lost_total'],
    ['API down', 'up'],
    ['database unreachable', 'mcp_tasks_database_up'],
    ['due-lag SLO burn', 'mcp_tasks_due_lag_seconds_bucket'],
    ['webhook failure ratio', 'mcp_tasks_webhook_deliveries_total'],
    ['submit refusals', 'mcp_tasks_submit_refusals_total'],
  ])('cover %s', (_what, metric) => {
    expect(rules.some((r) => metricNamesIn(r.expr).includes(metric))).toBe(true);
  });

  it('each have a severity, a summary and a runbook_url', () => {
    for (const rule of rules) {
      expect({
        alert: rule.alert,
        severity: rule.labels?.severity,
        summary: !!rule.annotations?.summary,
        runbook: rule.annotations?.runbook_url,
      }).toEqual({
        alert: rule.alert,
        severity: expect.stringMatching(/^(warning|critical)$/),
        summary: true,
        runbook: `docs/operations.md#${rule.alert.toLowerCase()}`,
      });
    }
  });

  it('link to a runbook anchor that exists, in the section matching their severity', () => {
    const sections = runbookSections(read('docs/operations.md'));
    for (const rule of rules) {
      const anchor = rule.annotations?.runbook_url?.split('#')[1] ?? '';
      expect({ alert: rule.alert, section: sections.get(anchor) }).toEqual({
        alert: rule.alert,
        section: SEVERITY_SECTION[rule.labels?.severity ?? ''],
      });
    }
  });

  it('finds anchors the way GitHub renders them (the check above can fail)', () => {
    const sections = runbookSections('## Critical alerts (page)\n### A `b` C-d\n## Other\n### X\n');
    expect([...sections]).toEqual([
      ['critical-alerts-page', 'Critical alerts (page)'],
      ['a-b-c-d', 'Critical alerts (page)'],
      ['other', 'Other'],
      ['x', 'Other'],
    ]);
  });

  it('are identical in compose (alerts.yml) and Kubernetes (PrometheusRule)', () => {
    const rule = parse(read('k8s/components/prometheus-operator/prometheus-rule.yaml')) as {
      kind: string;
      spec: unknown;
    };
    expect(rule.kind).toBe('PrometheusRule');
    expect(rule.spec).toEqual({ groups: alerts.groups });
  });

  it('ship the PrometheusRule exactly as npm run rules:k8s generates it', () => {
    expect(read('k8s/components/prometheus-operator/prometheus-rule.yaml')).toBe(
      renderPrometheusRule(read('deploy/prometheus/alerts.yml')),
    );
  });

  it('use histogram suffixes only on histograms', () => {
    const histograms = new Set<string>(
      METRIC_DEFINITIONS.filter((d) => d.type === 'histogram').map((d) => d.name),
    );
    const all = [...panelExprs, ...rules.map((r) => r.expr)].flatMap(metricNamesIn);
    for (const name of all.filter((n) => /_(bucket|sum|count)$/.test(n) && n.startsWith('mcp_'))) {
      expect(histograms.has(name.replace(/_(bucket|sum|count)$/, ''))).toBe(true);
    }
  });
});
