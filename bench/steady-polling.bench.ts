import { pollerMissing } from './lib/poller-gate';
import { Benchmark } from './lib/types';

export const steadyPollingBench: Benchmark = {
  name: 'steady-polling',
  title: 'steady-polling',
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
