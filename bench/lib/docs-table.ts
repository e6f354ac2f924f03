import { readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { MachineInfo } from './machine';
import { BenchResult } from './types';

export const TABLE_START = '<!-- bench:results:start -->';
export const TABLE_END = '<!-- bench:results:end -->';

/**
 * Rewrites the part of docs/benchmarks.md between the markers from the JSON results on disk,
 * so `--only NAME` refreshes one benchmark and keeps the others' last measured figures.
 */
export async function rewriteDocsTable(
  docsPath: string,
  machine: MachineInfo,
  results: BenchResult[],
): Promise<void> {
  const doc = readFileSync(docsPath, 'utf8');
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`${docsPath}: result markers not found`);
  const body = renderTable(machine, results);
  const text = `${doc.slice(0, start + TABLE_START.length)}\n${body}\n${doc.slice(end)}`;
  // Formatted as `prettier --check` wants it, so a fresh run leaves the lint clean.
  const options = (await resolveConfig(docsPath)) ?? {};
  writeFileSync(docsPath, await format(text, { ...options, parser: 'markdown' }));
}

export function renderTable(machine: MachineInfo, results: BenchResult[]): string {
  const settings = Object.entries(machine.postgresSettings)
    .map(([name, value]) => `${name}=${value}`)
    .join(', ');
  const lines = [
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB; ` +
      `Node ${machine.node}; PostgreSQL ${machine.postgres} (${settings}) on the same machine; ` +
      `graphile-worker ${machine.graphileWorker}.`,
    '',
  ];
  for (const result of results) {
    lines.push(`### ${result.title}`, '');
    lines.push(
      `\`${result.command}\`, ${result.date}. Settings: \`${JSON.stringify(result.settings)}\``,
      '',
    );
    if (result.status === 'skipped') {
      lines.push(`Skipped: ${result.reason ?? 'no reason given'}.`, '');
      continue;
    }
    lines.push('| metric | median | unit | target | met |', '|---|---:|---|---|---|');
    for (const row of result.rows) {
      const met = row.met === undefined ? '' : row.met ? 'yes' : '**no**';
      lines.push(
        `| ${row.metric} | ${row.value ?? 'n/a'} | ${row.unit} | ${row.target ?? ''} | ${met} |`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}
