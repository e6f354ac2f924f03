// Guards the size rule of docs/architecture.md ("The code"): a source file under apps/ or libs/
// over 300 lines says why in its header, so a file that grows past it is split or justified on
// purpose, not by drift.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const MAX_LINES = 300;
/** The words a longer file's header comment gives its reason with. */
const REASON = /over 300 lines/i;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

it('no source file under apps/ or libs/ is over 300 lines without a reason in its header', () => {
  const files = ['apps', 'libs'].flatMap((dir) => sourceFiles(join(ROOT, dir)));
  expect(files.length).toBeGreaterThan(100);
  const unexplained = files.flatMap((file) => {
    const text = readFileSync(file, 'utf8');
    const lines = lineCount(text);
    if (lines <= MAX_LINES) return [];
    // The header: the text before the first class or exported function (all of it if none).
    const declared = text.search(/^(export )?(abstract )?class |^export function /m);
    const header = declared < 0 ? text : text.slice(0, declared);
    return REASON.test(header) ? [] : [`${relative(ROOT, file)}: ${lines} lines`];
  });
  expect(unexplained).toEqual([]);
});
