// Guards against alert rules Prometheus would reject, and alerts that never fire or always fire.
import { join } from 'node:path';
import { runTool, toolAvailable } from '../helpers/external-tool';

const RULES_DIR = join(__dirname, '..', '..', 'deploy', 'prometheus');
const hasPromtool = toolAvailable('promtool', ['--version']);
const describeWithPromtool = hasPromtool ? describe : describe.skip;

if (!hasPromtool) {
  console.warn('promtool not found: alert rule tests skipped (Debian: apt-get install prometheus)');
}

describeWithPromtool('alert rules under promtool', () => {
  it('pass promtool check rules', () => {
    const run = runTool('promtool', ['check', 'rules', 'alerts.yml'], RULES_DIR);
    expect({ status: run.status, out: run.stdout + run.stderr }).toEqual({
      status: 0,
      out: expect.stringContaining('SUCCESS') as string,
    });
  });

  it('pass promtool test rules: every alert fires on its case and stays quiet on a healthy one', () => {
    const run = runTool('promtool', ['test', 'rules', 'alerts.test.yml'], RULES_DIR);
    expect({ status: run.status, out: run.stdout + run.stderr }).toEqual({
      status: 0,
      out: expect.stringContaining('SUCCESS') as string,
    });
  });
});
