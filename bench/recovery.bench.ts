import { pollerMissing } from './lib/poller-gate';
import { Benchmark } from './lib/types';

export const recoveryBench: Benchmark = {
  name: 'recovery',
  title: 'recovery',
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
