// Guards docs/testing.md, "A failed test's processes": the report of a failed test ends with
// the latest output of each process that ran during it, headed by what it was and how it ended;
// a passing test's report has none. Runs a fixture file in a jest of its own, as the suite's
// integration project runs a test file.
import { join } from 'node:path';
import { useProcesses } from '../../helpers/process-scope';

const processes = useProcesses();
const ROOT = join(__dirname, '..', '..', '..');

it("ends a failed test's report with its processes' latest output, and only a failed test's", async () => {
  const run = await processes.run(
    process.execPath,
    [
      join(ROOT, 'node_modules/jest/bin/jest.js'),
      '--config',
      join(__dirname, 'fixtures/jest.config.js'),
      '--runInBand',
      '--ci',
    ],
    { env: { ...process.env, FORCE_COLOR: '0' } },
  );
  expect(run.code).toBe(1);
  const report = run.stderr;
  expect(report).toMatch(/✕ fails while its demo server runs/);
  expect(report).toMatch(/✓ passes/);
  const headings = report.match(/the latest output of the processes this test ran:/g) ?? [];
  expect(headings).toHaveLength(1);
  expect(report).toMatch(
    /--- dist\/apps\/demo-server\/main\.js \(pid \d+\), exited 0 ---\n\s+demo-server listening on http:\/\/127\.0\.0\.1:\d+/,
  );
});
