// Guards against code comments, tests, benchmarks, migrations and the docs themselves citing rules
// the repository does not contain: a `*.md` page missing from docs/, a quoted heading that page
// lacks, or an invariant or requirement number that docs/leases.md or docs/connections.md does
// not define.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const DOCS = join(ROOT, 'docs');
const SCANNED = ['apps', 'libs', 'migrations', 'test', 'bench', 'scripts', 'docs'];
/** This file's own examples of citations that do not resolve. */
const SELF = relative(ROOT, __filename);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') || path.endsWith('.md') ? [path] : [];
  });
}

/** Comment continuation markers removed, so a citation wrapped over two lines reads as one. */
function flatten(text: string): string {
  return text.replace(/\n\s*(?:\*(?!\/)|\/\/)?\s*/g, ' ');
}

function normalise(heading: string): string {
  return heading.replace(/`/g, '').trim().toLowerCase();
}

function headings(page: string): string[] {
  return readFileSync(join(DOCS, page), 'utf8')
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => normalise(line.replace(/^#+ /, '')));
}

/** "6", "1–4, 10–14", "2 and 3" → the numbers they name. */
function numbers(list: string): number[] {
  return list.split(/,|\band\b/).flatMap((part) => {
    const [from, to] = part.split(/[–-]/).map((n) => Number(n.trim()));
    if (to === undefined) return [from];
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  });
}

interface Citation {
  file: string;
  /** What the comment says, for the failure message. */
  text: string;
  page: string;
  /** A heading of `page` that must exist (prefix match, case and backticks ignored). */
  heading?: string;
}

/** Every citation of a docs page (with or without a heading) in one source text. */
export function citations(file: string, source: string): Citation[] {
  const text = flatten(source);
  const out: Citation[] = [];
  for (const m of text.matchAll(/([\w./-]*\b[\w-]+\.md)\b(?:(?:,\s*|\s*\(\s*)"([^"]+)")?/g)) {
    const [whole, path, heading] = m;
    const page = path.replace(/^docs\//, '');
    out.push({ file, text: whole, page, heading });
  }
  const numbered: [RegExp, string, string][] = [
    [/\binvariants?\s+(\d+(?:\s*(?:[–-]|,|\band\b)\s*\d+)*)/gi, 'leases.md', 'invariant'],
    [/\brequirements?\s+(\d+(?:\s*(?:[–-]|,|\band\b)\s*\d+)*)/gi, 'connections.md', 'requirement'],
  ];
  for (const [pattern, page, word] of numbered) {
    for (const m of text.matchAll(pattern)) {
      for (const n of numbers(m[1])) out.push({ file, text: m[0], page, heading: `${word} ${n}:` });
    }
  }
  return out;
}

function problems(cites: Citation[]): string[] {
  return cites.flatMap((c) => {
    const where = `${c.file}: "${c.text}"`;
    if (c.page === 'README.md') return [];
    if (c.page.includes('/') || !existsSync(join(DOCS, c.page))) {
      return [`${where} names ${c.page}, which is not a page in docs/`];
    }
    if (c.heading === undefined) return [];
    const wanted = normalise(c.heading);
    if (headings(c.page).some((h) => h.startsWith(wanted))) return [];
    return [`${where}: docs/${c.page} has no heading starting "${c.heading}"`];
  });
}

const all = SCANNED.flatMap((dir) => sourceFiles(join(ROOT, dir)))
  .filter((path) => relative(ROOT, path) !== SELF)
  .flatMap((path) => citations(relative(ROOT, path), readFileSync(path, 'utf8')));

it('finds the citations it checks (the scan is not vacuous)', () => {
  expect(all.filter((c) => c.heading !== undefined).length).toBeGreaterThan(20);
  expect(all.some((c) => c.page === 'leases.md' && /invariant/.test(c.heading ?? ''))).toBe(true);
});

it('resolves every cited page, heading, invariant and requirement in docs/', () => {
  expect(problems(all)).toEqual([]);
});

it('reports a citation that does not resolve', () => {
  const bogus = citations(
    'x.ts',
    '/** See leases.md, "No such heading", invariant 99, requirement 3 and\n * spec/contracts.md. */',
  );
  expect(problems(bogus)).toEqual([
    'x.ts: "leases.md, "No such heading"": docs/leases.md has no heading starting "No such heading"',
    'x.ts: "spec/contracts.md" names spec/contracts.md, which is not a page in docs/',
    'x.ts: "invariant 99": docs/leases.md has no heading starting "invariant 99:"',
  ]);
});
