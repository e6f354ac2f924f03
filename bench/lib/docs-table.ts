import { readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { MachineInfo } from './machine';
import { BenchResult } from './types';

export const TABLE_START = '<!-- bench:results:start -->';
export const TABLE_END = '<!-- bench:results:end -->';

/**
 * Rewrites the part of docs/benchmarks.md between the markers: the sections of the benchmarks
 * in `ran` are rendered from their results, every other section is kept as the document has it
 * (`### <title>` starts a section), so `--only NAME` refreshes that benchmark's rows alone even
 * on a clone whose bench/results/ holds nothing else. `order` lists every benchmark's title in
 * runner order; sections of titles it does not know are kept at the end.
 */
export async function rewriteDocsTable(
  docsPath: string,
  machine: MachineInfo,
  ran: BenchResult[],
  order: readonly string[],
): Promise<void> {
  const doc = readFileSync(docsPath, 'utf8');
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start) throw new Error(`${docsPath}: result markers not found`);
  const kept = splitSections(doc.slice(start + TABLE_START.length, end));
  const fresh = new Map(ran.map((result) => [result.title, renderSection(result)]));
  const sections: string[] = [];
  for (const title of order) {
    const text = fresh.get(title) ?? kept.get(title);
    if (text !== undefined) sections.push(text);
  }
  for (const [title, text] of kept) if (!order.includes(title)) sections.push(text);
  const body = [renderMachine(machine), '', ...sections].join('\n');
  const text = `${doc.slice(0, start + TABLE_START.length)}\n${body}\n${doc.slice(end)}`;
  // Formatted as `prettier --check` wants it, so a fresh run leaves the lint clean.
  const options = (await resolveConfig(docsPath)) ?? {};
  writeFileSync(docsPath, await format(text, { ...options, parser: 'markdown' }));
}

/** The generated region's sections by title (`### <title>` up to the next one). */
export function splitSections(region: string): Map<string, string> {
  const sections = new Map<string, string>();
  let title: string | undefined;
  let lines: string[] = [];
  const flush = (): void => {
    if (title !== undefined) sections.set(title, `${lines.join('\n').trimEnd()}\n`);
  };
  for (const line of region.split('\n')) {
    if (line.startsWith('### ')) {
      flush();
      title = line.slice(4).trim();
      lines = [];
    }
    if (title !== undefined) lines.push(line);
  }
  flush();
  return sections;
}

function renderMachine(machine: MachineInfo): string {
  const settings = Object.entries(machine.postgresSettings)
    .map(([name, value]) => `${name}=${value}`)
    .join(', ');
  return (
    `Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB; ` +
    `Node ${machine.node}; PostgreSQL ${machine.postgres} (${settings}) on the same machine; ` +
    `graphile-worker ${machine.graphileWorker}.`
  );
}

/** One benchmark's section: its heading, command, date, settings and table. */
export function renderSection(result: BenchResult): string {
  const lines = [`### ${result.title}`, ''];
  lines.push(
    `\`${result.command}\`, ${result.date}. Settings: \`${JSON.stringify(result.settings)}\``,
    '',
  );
  if (result.status === 'skipped') {
    lines.push(`Skipped: ${result.reason ?? 'no reason given'}.`, '');
    return lines.join('\n');
  }
  lines.push('| metric | median | unit | target | met |', '|---|---:|---|---|---|');
  for (const row of result.rows) {
    const met = row.met === undefined ? '' : row.met ? 'yes' : '**no**';
    lines.push(
      `| ${row.metric} | ${row.value ?? 'n/a'} | ${row.unit} | ${row.target ?? ''} | ${met} |`,
    );
  }
  lines.push('');
  return lines.join('\n');
}
