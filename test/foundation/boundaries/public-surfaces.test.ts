// Each library's index exports only what other code (apps, other libraries, test/, bench/,
// scripts/, migrations/) imports through `@app/<lib>`; what only the library itself uses stays
// behind its index. `npm run exports:unused` prints the same report.
import { join } from 'node:path';
import { publicSurfaceReport } from '../../../scripts/unused-exports';

const report = publicSurfaceReport(join(__dirname, '..', '..', '..'));

it('no library index exports a name that nothing outside the library imports', () => {
  expect(report.unused).toEqual([]);
});

it('no file imports a library whole, so every use of a public name is visible', () => {
  expect(report.wholeImports).toEqual([]);
});

it('no file outside a library imports its internals by a relative path, past its index', () => {
  expect(report.deepImports).toEqual([]);
});
