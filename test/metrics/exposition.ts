// A small parser of the Prometheus text format, so metric assertions read samples, not substrings.

/** One sample line of the Prometheus text format: `name{a="b"} 1.5`. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** A parsed `/metrics` answer: declared families (HELP/TYPE) and every sample. */
export interface Exposition {
  /** Family name → declared type (`counter`, `gauge`, `histogram`, ...). */
  types: Map<string, string>;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*,?/g;

/**
 * Parses the text exposition format (version 0.0.4), as prom-client writes it. prom-client has
 * no parser of its own; this one is strict enough for tests: a line it cannot read throws, so a
 * malformed exposition fails the test instead of hiding samples.
 */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const [, keyword, name, type] = line.split(/\s+/);
      if (keyword === 'TYPE') types.set(name, type);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`unparseable exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, key, raw] of (match[2] ?? '').matchAll(LABEL)) {
      labels[key] = raw.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    samples.push({ name: match[1], labels, value: parseValue(match[3]) });
  }
  return { types, samples };
}

function parseValue(raw: string): number {
  if (raw === '+Inf') return Infinity;
  if (raw === '-Inf') return -Infinity;
  const value = Number(raw);
  if (raw !== 'NaN' && Number.isNaN(value)) throw new Error(`bad sample value ${raw}`);
  return value;
}

/** Samples of `name` whose labels include every pair of `match`. */
export function select(
  exposition: Exposition,
  name: string,
  match: Record<string, string> = {},
): Sample[] {
  return exposition.samples.filter(
    (s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v),
  );
}

/** Sum of the matching samples' values (0 when there are none). */
export function sum(
  exposition: Exposition,
  name: string,
  match: Record<string, string> = {},
): number {
  return select(exposition, name, match).reduce((total, s) => total + s.value, 0);
}
