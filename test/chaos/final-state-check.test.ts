import { ChaosEvidence, FinalTask } from '../../bench/chaos/chaos-evidence';
import { CHAOS_TOOLSETS } from '../../bench/chaos/chaos-toolsets';
import { finalStateViolations } from '../../bench/chaos/final-state.check';
import { DrivenTask } from '../../bench/chaos/task-driver';

// The chaos checker's excuse for a timeout with no injected fault has a cap (docs/chaos.md,
// "What is checked"): honest answers that stay rare pass, a run where they are common fails.

const aSync = CHAOS_TOOLSETS.find((t) => t.name === 'a-sync')!;

function evidence(completed: number, timedOut: number): ChaosEvidence {
  const driven: DrivenTask[] = [];
  const tasks = new Map<string, FinalTask>();
  for (let i = 0; i < completed + timedOut; i++) {
    const id = `task_${i}`;
    const uncertain = i < timedOut;
    driven.push({
      thread: 't',
      taskId: id,
      plan: {
        tag: `tag-${i}`,
        toolset: aSync,
        script: 'complete',
        args: {},
        submitAtMs: 0,
        expected: { status: 'completed' },
      },
    });
    tasks.set(id, {
      id,
      status: uncertain ? 'failed' : 'completed',
      error_code: uncertain ? 'outcome_uncertain' : null,
      error_message: uncertain ? 'the upstream server did not answer within 30000 ms' : null,
      remote_task_id: null,
      pinned_worker_id: null,
      cancel_requested_at: null,
      submitted_at: new Date(0),
      completed_at: new Date(1000),
    });
  }
  return {
    driven,
    tasks,
    audit: new Map(),
    faults: [],
    submitsByTag: new Map(),
    upstreamJobs: [],
    terminalChanges: [],
    leaseMs: 10_000,
  };
}

it('excuses up to 1 % of the tasks ending on a timeout with no fault near them', () => {
  const report = finalStateViolations(evidence(1980, 20));
  expect(report.violations).toEqual([]);
  expect([...report.excused.values()]).toEqual([20]);
});

it('fails the run when more of them do', () => {
  const report = finalStateViolations(evidence(1979, 21));
  expect(report.violations).toEqual([
    expect.stringContaining('21 tasks ended outcome_uncertain on an upstream call timeout'),
  ]);
});

it('allows two in a short run', () => {
  expect(finalStateViolations(evidence(148, 2)).violations).toEqual([]);
  expect(finalStateViolations(evidence(147, 3)).violations).toHaveLength(1);
});

it('counts the tasks a fault reached, however they ended, apart from those it excused', () => {
  // Tasks live from 0 to 1000 ms (no claims recorded: from their end); a Postgres restart within
  // that window reaches every one of them, and one that starts 29 s after they ended reaches none.
  const during = evidence(3, 1);
  during.faults = [{ kind: 'pg-restart', target: 'postgres', start: 500, end: 700 }];
  const report = finalStateViolations(during);
  expect(report.reached).toBe(4);
  expect([...report.excused]).toEqual([['outcome_uncertain after pg-restart', 1]]);
  const later = evidence(3, 1);
  later.faults = [{ kind: 'pg-restart', target: 'postgres', start: 30_000, end: 30_500 }];
  expect(finalStateViolations(later).reached).toBe(0);
});
