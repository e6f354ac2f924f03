// Guards the demo server's state file (docs/demo-server.md, `--state-file`): a change is one
// journal line, a restart replays the journal over the snapshot, a line cut short by a kill is
// ignored only when it is the last, a long journal is folded into the snapshot, and a reader
// beside a running server sees the journal's changes without writing.
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobRegistry, type PersistedState, type StateRecord } from './job.registry';
import { readStateFile } from './state-file.reader';
import { StateFileRepository } from './state-file.repository';

function stateFile(): string {
  return join(mkdtempSync(join(tmpdir(), 'demo-state-spec-')), 'state.json');
}

const open = (path: string) => new StateFileRepository<PersistedState, StateRecord>(path);

it('a change is one journal line; a new registry replays it over the snapshot', () => {
  const path = stateFile();
  const first = new JobRegistry(open(path));
  const job = first.create('ordinary', { duration_ms: 60_000, tag: 't' });
  first.count('ordinary', 'submits');
  first.countTag('t', 'submits');
  first.cancel(job);
  const lines = readFileSync(`${path}.journal`, 'utf8').trim().split('\n');
  expect(lines.map((line) => Object.keys(JSON.parse(line) as object)[0])).toEqual([
    'job',
    'tag',
    'counters',
    'tag',
    'job',
  ]);

  const second = new JobRegistry(open(path));
  expect(second.phase(second.get(job.id)!).status).toBe('cancelled');
  expect(second.stats('t')).toMatchObject({
    ordinary: { submits: 1 },
    by_tag: { t: { submits: 1, state: 'cancelled' } },
  });
  // The start folded the journal into the snapshot.
  expect(readFileSync(`${path}.journal`, 'utf8')).toBe('');
  expect((JSON.parse(readFileSync(path, 'utf8')) as PersistedState).jobs).toHaveLength(1);
});

it('ignores a last line cut short by a kill, and refuses a broken line before others', () => {
  const path = stateFile();
  const registry = new JobRegistry(open(path));
  registry.count('tasks', 'gets');
  appendFileSync(`${path}.journal`, '{"counters":"tasks","val');
  expect(new JobRegistry(open(path)).stats()).toMatchObject({ tasks: { gets: 1 } });

  writeFileSync(
    `${path}.journal`,
    '{"counters":"tasks"\n{"tag":"x","entry":{"submits":1,"cancels":0}}\n',
  );
  expect(() => open(path).load()).toThrow(/line 1 is not valid JSON/);
});

it('folds a long journal into the snapshot as it goes, losing nothing', () => {
  const path = stateFile();
  const registry = new JobRegistry(open(path));
  for (let i = 0; i < 2500; i++) registry.count('ordinary', 'status_calls');
  const journal = readFileSync(`${path}.journal`, 'utf8').trim().split('\n');
  expect(journal.length).toBeLessThanOrEqual(1000);
  expect(new JobRegistry(open(path)).stats()).toMatchObject({
    ordinary: { status_calls: 2500 },
  });
});

it('keeps a tag named like a prototype key as a tag', () => {
  const path = stateFile();
  const registry = new JobRegistry(open(path));
  registry.countTag('__proto__', 'submits');
  registry.countTagAnswer('__proto__', '__proto__');
  const again = new JobRegistry(open(path));
  expect(again.stats('__proto__').by_tag).toEqual({
    ['__proto__']: expect.objectContaining({ submits: 1, answers: { ['__proto__']: 1 } }),
  });
});

it('a reader beside the running server sees snapshot and journal, and writes nothing', () => {
  const path = stateFile();
  expect(readStateFile(path)).toBeUndefined();
  const registry = new JobRegistry(open(path));
  const job = registry.create('ordinary', { duration_ms: 60_000 });
  registry.count('ordinary', 'submits');
  const journal = readFileSync(`${path}.journal`, 'utf8');
  const state = readStateFile(path);
  expect(state?.jobs.map((j) => j.id)).toEqual([job.id]);
  expect(state?.counters.ordinary.submits).toBe(1);
  expect(readFileSync(`${path}.journal`, 'utf8')).toBe(journal);
  expect(() => readFileSync(path)).toThrow(/ENOENT/);
});
