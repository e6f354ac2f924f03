// Guards against a single-benchmark run (`npm run bench -- --only NAME`) wiping or rewriting the
// docs/benchmarks.md sections of benchmarks it did not run.
import { mergeSections } from '../../../bench/lib/docs-sections';
import type { MachineInfo } from '../../../bench/lib/machine';
import type { BenchResult } from '../../../bench/lib/types';

const machine: MachineInfo = {
  cpu: 'Test CPU',
  cores: 2,
  memoryGiB: 4,
  node: 'v20',
  postgres: '15',
  graphileWorker: '0.17.3',
  postgresSettings: { fsync: 'on' },
};

function result(title: string, value: number): BenchResult {
  return {
    name: title.toLowerCase(),
    title,
    status: 'ok',
    command: `npm run bench -- --only ${title.toLowerCase()}`,
    date: '2026-12-01T00:00:00.000Z',
    settings: {},
    rows: [{ metric: 'speed', value, unit: 'ops/s' }],
    runs: [],
  };
}

it('rewrites the sections of the benchmarks that ran and keeps every other one as written', () => {
  const region =
    `\n\nMachine: old.\n\n### Alpha\n\nHand-kept alpha text 111.\n\n` +
    `### Beta\n\nOld beta figures 222.\n\n### Retired\n\nA section no runner knows 333.\n\n`;
  const text = mergeSections(
    region,
    machine,
    [result('Beta', 999), result('Gamma', 555)],
    ['Alpha', 'Beta', 'Gamma'],
  );
  expect(text).toContain('Hand-kept alpha text 111.');
  expect(text).toContain('A section no runner knows 333.');
  expect(text).not.toContain('Old beta figures 222.');
  expect(text).toContain('| speed | 999 | ops/s |');
  expect(text).toContain('| speed | 555 | ops/s |');
  // The machine is named in each fresh section, since kept sections may come from another one;
  // the old layout's global line goes.
  expect(text.split('### Beta')[1].split('### Gamma')[0]).toContain('Machine: Test CPU, 2 cores');
  expect(text.split('### Gamma')[1]).toContain('Machine: Test CPU, 2 cores');
  expect(text).not.toContain('Machine: old.');
  // Runner order, and sections no runner knows last.
  const order = ['### Alpha', '### Beta', '### Gamma', '### Retired'].map((h) => text.indexOf(h));
  expect(order.every((at, i) => at > 0 && (i === 0 || at > order[i - 1]))).toBe(true);
});
