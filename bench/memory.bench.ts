import { pollerMissing } from './lib/poller-gate';
import { Benchmark } from './lib/types';

export const memoryBench: Benchmark = {
  name: 'memory',
  title: 'memory',
  async run() {
    return {
      status: 'skipped',
      reason: pollerMissing() ?? 'not written yet',
      settings: {},
      rows: [],
      runs: [],
    };
  },
};
