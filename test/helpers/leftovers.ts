// What a killed or finished test run leaves behind, and how the next run tells it is not in use.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Whether a process with this pid exists (EPERM: it does, as another user's). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The folder in `dataDir` a jest worker compiles the test/upstream fixtures into. */
export function fixtureFolder(dataDir: string, workerPid: number): string {
  return join(dataDir, `mcp-test-${workerPid}`);
}

/**
 * Removes the fixture folders in `dataDir` of workers whose process is gone (nothing else
 * removes them: a worker's folder serves every file it runs). Returns their names.
 */
export function removeDeadFixtureFolders(dataDir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dataDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const entry of entries) {
    const pid = /^mcp-test-(\d+)$/.exec(entry)?.[1];
    if (pid === undefined || isRunning(Number(pid))) continue;
    rmSync(join(dataDir, entry), { recursive: true, force: true });
    removed.push(entry);
  }
  return removed;
}
