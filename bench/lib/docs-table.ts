import { readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { mergeSections } from './docs-sections';
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
  const body = mergeSections(doc.slice(start + TABLE_START.length, end), machine, ran, order);
  const text = `${doc.slice(0, start + TABLE_START.length)}\n${body}\n${doc.slice(end)}`;
  // Formatted as `prettier --check` wants it, so a fresh run leaves the lint clean.
  const options = (await resolveConfig(docsPath)) ?? {};
  writeFileSync(docsPath, await format(text, { ...options, parser: 'markdown' }));
}
