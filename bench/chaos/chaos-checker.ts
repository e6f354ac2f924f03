import { ChaosEvidence } from './chaos-evidence';
import { failoverFigures } from './failover.report';
import { finalStateViolations } from './final-state.check';
import { leaseAuditViolations } from './lease-audit.check';
import { upstreamViolations, webhookViolations } from './upstream.check';

/** The checker's verdict: violations per invariant, and the honest deviations it accepted. */
export interface ChaosVerdict {
  violations: Map<string, string[]>;
  excused: Map<string, number>;
  /** How many accepted tasks a fault reached, however they ended. */
  reached: number;
}

export function checkInvariants(evidence: ChaosEvidence): ChaosVerdict {
  const final = finalStateViolations(evidence);
  const violations = new Map<string, string[]>([
    ['final state as scripted', final.violations],
    ['no duplicate submit, no lost remote handle', upstreamViolations(evidence)],
    [
      'leases: fenced writes, single live lease, terminal rows and handles kept',
      leaseAuditViolations(evidence.audit),
    ],
    ['terminal rows unchanged since first seen', evidence.terminalChanges],
    ['every terminal event delivered to the webhook receiver', webhookViolations(evidence)],
  ]);
  const failover = failoverFigures(evidence);
  if (failover) {
    violations.set('failover: no task lost, submitted twice or cancelled unasked', [
      ...failover.lost,
      ...failover.duplicateSubmits,
      ...failover.wronglyCancelled,
    ]);
  }
  return { violations, excused: final.excused, reached: final.reached };
}
