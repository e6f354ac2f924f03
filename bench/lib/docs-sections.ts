import { MachineInfo } from './machine';
import { BenchResult } from './types';

/**
 * The new text between the markers (before formatting): one section per benchmark in `order`,
 * freshly rendered if it ran (with the machine it ran on: sections kept from earlier runs may
 * come from another machine), else as `region` has it; sections of titles `order` does not know
 * are kept at the end. Text before the first section (an older layout's global machine line) is
 * dropped.
 */
export function mergeSections(
  region: string,
  machine: MachineInfo,
  ran: BenchResult[],
  order: readonly string[],
): string {
  const kept = splitSections(region);
  const fresh = new Map(ran.map((result) => [result.title, renderSection(result, machine)]));
  const sections: string[] = [];
  for (const title of order) {
    const text = fresh.get(title) ?? kept.get(title);
    if (text !== undefined) sections.push(text);
  }
  for (const [title, text] of kept) if (!order.includes(title)) sections.push(text);
  return ['', ...sections].join('\n');
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

/** One benchmark's section: its heading, command, date, machine, settings and table. */
export function renderSection(result: BenchResult, machine: MachineInfo): string {
  const lines = [`### ${result.title}`, ''];
  lines.push(
    `\`${result.command}\`, ${result.date}. ${renderMachine(machine)}`,
    '',
    `Settings: \`${JSON.stringify(result.settings)}\``,
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
