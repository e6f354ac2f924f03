// Guards what the process scope does (docs/testing.md, "Processes go through a fixture"): with
// `perTest`, what a test starts is stopped after it and what beforeAll started stays for the file;
// a stop that fails does not keep the others from stopping, and is reported.
import type { ChildProcess } from 'node:child_process';
import { openProcessScope, useProcesses } from '../../helpers/process-scope';

const processes = useProcesses({ perTest: true });
const forever = ['-e', 'setInterval(() => {}, 1 << 30)'];
const running = (child: ChildProcess): boolean =>
  child.exitCode === null && child.signalCode === null;

let fileLong: ChildProcess;
let testLong: ChildProcess | undefined;

beforeAll(() => {
  fileLong = processes.spawn(process.execPath, forever, { stdio: 'ignore' });
});

it('runs what beforeAll and the test started', () => {
  testLong = processes.spawn(process.execPath, forever, { stdio: 'ignore' });
  expect(running(fileLong)).toBe(true);
  expect(running(testLong)).toBe(true);
});

it("stopped the last test's process after it, and kept beforeAll's", () => {
  expect(testLong && running(testLong)).toBe(false);
  expect(testLong?.signalCode).toBe('SIGTERM');
  expect(running(fileLong)).toBe(true);
});

it('runs a process to its end, with its output and exit code', async () => {
  const script = "process.stdout.write('out'); process.stderr.write('err'); process.exit(3)";
  expect(await processes.run(process.execPath, ['-e', script])).toEqual({
    code: 3,
    signal: null,
    stdout: 'out',
    stderr: 'err',
  });
});

it('stops every process even when one stop fails, and says which failed', async () => {
  const child = processes.spawn(process.execPath, forever, { stdio: 'ignore' });
  openProcessScope().add({
    what: 'a stop that fails',
    stop: () => Promise.reject(new Error('refused')),
  });
  await expect(processes.stopAll()).rejects.toThrow(
    /could not stop:\n {2}a stop that fails: Error: refused/,
  );
  expect(running(child)).toBe(false);
  expect(running(fileLong)).toBe(false);
});
