// Guards --state-file (docs/demo-server.md): jobs and counters survive an HTTP server restart,
// a kill included, so polls keep working; a change appends to the journal rather than rewriting
// every job, and the journal is folded into the snapshot at a restart.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitUntil } from '../helpers/wait';
import { startDemoServer } from '../helpers/processes';
import { callStructured, connectHttp, useDemoProcesses } from './demo-process.helper';

useDemoProcesses();

describe('state file', () => {
  it.each(['stop', 'kill'] as const)(
    'keeps jobs, cancels and counters across a restart (%s)',
    async (end) => {
      const stateFile = join(mkdtempSync(join(tmpdir(), 'demo-state-')), 'state.json');
      const before = await startDemoServer(['--state-file', stateFile]);
      const client = await connectHttp(before.url);
      const finishing = await callStructured(client, 'demo_submit', {
        duration_ms: 1500,
        result: { kept: 1 },
        tag: 'p',
      });
      const cancelled = await callStructured(client, 'demo_submit', {
        duration_ms: 60_000,
        tag: 'q',
      });
      await callStructured(client, 'demo_cancel', { task_id: cancelled.task_id });
      // On disk once answered, one line per change: the two jobs, the cancel, the counters, tags.
      const journal = readFileSync(`${stateFile}.journal`, 'utf8').trim().split('\n');
      expect(journal.map((line) => Object.keys(JSON.parse(line))[0])).toEqual(
        expect.arrayContaining(['job', 'counters', 'tag']),
      );
      expect(existsSync(stateFile)).toBe(false);
      // A kill leaves the journal alone; a stop folds it into the snapshot.
      await (end === 'kill' ? before.kill() : before.stop());

      const after = await startDemoServer(['--state-file', stateFile]);
      const again = await connectHttp(after.url);
      const done = await waitUntil(async () => {
        const status = await callStructured(again, 'demo_status', { task_id: finishing.task_id });
        return status.status === 'completed' ? status : undefined;
      }, 'the pre-restart job to complete');
      expect(done.result).toEqual({ kept: 1 });
      expect(
        await callStructured(again, 'demo_status', { task_id: cancelled.task_id }),
      ).toMatchObject({
        status: 'cancelled',
      });
      const stats = await callStructured(again, 'demo_stats');
      expect(stats.ordinary.submits).toBe(2);
      expect(stats.by_tag.q).toMatchObject({ submits: 1, cancels: 1, cancelled: true });
      expect(stats.live_jobs).toBe(0);
      // The restart folded the journal into the snapshot.
      expect(JSON.parse(readFileSync(stateFile, 'utf8')).jobs).toHaveLength(2);
    },
  );
});
