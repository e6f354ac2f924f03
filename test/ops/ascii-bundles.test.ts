// Guards the ASCII bundles (scripts/ascii-source.ts; docs/operations.md, "Process start and the
// code cache"): every bundle the build makes is ASCII, so the loader reads it as Latin-1 and V8
// holds one byte a character; and the rewrite that makes it so changes spelling only: a program
// escaped computes what it computed before, and a file it cannot rewrite safely is left alone.
import { isAscii } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { escapeNonAscii } from '../../scripts/ascii-source';

const APPS = ['api', 'poller', 'demo-server', 'cli'];

it.each(APPS)('the %s bundle is ASCII', (app) => {
  const bundle = readFileSync(join(__dirname, '..', '..', 'dist', 'apps', app, 'bundle.js'));
  expect(isAscii(bundle)).toBe(true);
});

/** What `program` computes (its last expression), run in a fresh context. */
function run(program: string): unknown {
  return runInNewContext(program);
}

/** Escapes `program`, checks the result is ASCII and computes the same, and returns it. */
function escapedAlike(program: string): string {
  const escaped = escapeNonAscii(program, 'case.js');
  expect(escaped).toBeDefined();
  expect(isAscii(Buffer.from(escaped!))).toBe(true);
  expect(JSON.stringify(run(escaped!))).toBe(JSON.stringify(run(program)));
  return escaped!;
}

describe('escapeNonAscii', () => {
  it('leaves an ASCII file as it is', () => {
    const program = 'const a = "plain"; a;';
    expect(escapeNonAscii(program, 'case.js')).toBe(program);
  });

  it('escapes strings, identity escapes and untagged templates to the same values', () => {
    escapedAlike('const s = "é — 😀"; const t = `Ö ${s} ß`; const u = "\\é"; [s, t, u, s.length];');
  });

  it('escapes regular expressions, with and without the u flag, to the same matches', () => {
    escapedAlike(
      [
        'const a = /^[A-ZÄÖÜß]+$/i;',
        'const b = /^[А-Я]+$/i;',
        'const c = /^[😀-🙏]$/u;',
        'const d = /\\é/;',
        "[a.test('ÄÖB'), a.test('Ä1'), b.test('ЖЯ'), c.test('😃'), c.test('😃😃'), d.test('é')];",
      ].join('\n'),
    );
  });

  it('escapes identifiers, comments and whitespace without changing names or tokens', () => {
    const escaped = escapedAlike(
      '// naïve comment\u2028const café = 1;\u00a0/* ü */ const o = { größe: café, 𝐀: 2 }; [café, o.größe, o.𝐀];',
    );
    expect(escaped).toContain('caf\\u{e9}');
  });

  it('leaves alone a tagged template, whose tag can read the raw text', () => {
    expect(escapeNonAscii('String.raw`é`;', 'case.js')).toBeUndefined();
  });

  it('leaves alone a line continuation written with a line separator', () => {
    expect(escapeNonAscii('const s = "a\\\u2028b"; s;', 'case.js')).toBeUndefined();
  });

  it('leaves alone a file the parser reports errors in', () => {
    expect(escapeNonAscii('const é = ;', 'case.js')).toBeUndefined();
  });
});
