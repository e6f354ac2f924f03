import {
  DATABASE_ERROR_PREFIX,
  LeaseLostError,
  TransientTaskError,
  isRoundHandle,
} from '@app/common';
import type { ContractDriver, DriverContext, PendingAnswers, SubmitOutcome } from '@app/drivers';
import type { ClaimedTask, TaskLeaseRepository } from '@app/persistence';
import type { UnrepeatableCalls } from './unrepeatable-calls';

/**
 * Sends a claimed task's stored answers upstream (docs/contracts.md, "Answering questions"), at
 * most once per key: the driver marks the keys sent, durably and fenced, right before it sends
 * them; they are marked delivered once the upstream acknowledged. A key marked sent but not
 * delivered (the previous holder stopped in between) is passed to the driver as uncertain.
 */
export class InputDelivery {
  constructor(
    private readonly leases: Pick<TaskLeaseRepository, 'markAnswers'>,
    private readonly calls: Pick<UnrepeatableCalls, 'begin'>,
  ) {}

  /**
   * @returns the call's new state when answering replaced the upstream handle (a
   *   multi-round-trip call); null when the task is simply polled next.
   */
  async deliver(
    item: ClaimedTask,
    driver: ContractDriver,
    ctx: DriverContext,
  ): Promise<SubmitOutcome | null> {
    const pending = pendingAnswers(item);
    if (!pending || !driver.answer) return null;
    const marked: string[] = [];
    const answers: PendingAnswers = {
      ...pending,
      beforeSend: async (keys) => {
        // A round's answers go in the retried tools/call, a new submit: from here on the
        // attempt holds it, and a draining poller keeps it (leases.md, "Held calls at shutdown").
        if (isRoundHandle(item.remoteTaskId)) {
          this.calls.begin(
            item,
            ctx.signal,
            () => new TransientTaskError('answers not sent: the attempt was aborted first'),
          );
        }
        try {
          await this.leases.markAnswers(item.lease, 'sent', keys);
        } catch (error) {
          if (error instanceof LeaseLostError) throw error;
          // Unknown outcome (docs/leases.md, "Ambiguous commits"): the keys may be marked, and
          // nothing was sent. Unmarked below like any send that provably did not happen, so the
          // next attempt does not take them for uncertain.
          marked.push(...keys);
          const reason = error instanceof Error ? error.message : String(error);
          throw new TransientTaskError(
            `${DATABASE_ERROR_PREFIX}the answers could not be marked sent, so none was sent: ${reason}`,
            { cause: error },
          );
        }
        marked.push(...keys);
      },
    };
    let outcome;
    try {
      outcome = await driver.answer(ctx, answers);
    } catch (error) {
      // Transient: provably not sent, or safe to send again (the driver decides which): pending.
      if (error instanceof TransientTaskError && marked.length > 0) {
        await this.leases.markAnswers(item.lease, 'unsent', marked);
      }
      throw error;
    }
    // A call that answered at once ends the task in the very next write; marking its keys first
    // would leave a waiting round with nothing to send if this worker stopped in between. Left
    // sent-but-unconfirmed, they make the next holder judge the retry uncertain instead.
    if (outcome.next && !outcome.next.handle) return outcome.next;
    await this.leases.markAnswers(item.lease, 'delivered', outcome.sent);
    return outcome.next ?? null;
  }
}

/** The answers not yet delivered; those marked sent are uncertain. */
export function pendingAnswers(item: ClaimedTask): Omit<PendingAnswers, 'beforeSend'> | null {
  const responses: Record<string, unknown> = {};
  const uncertain: string[] = [];
  for (const [key, answer] of Object.entries(item.inputResponses ?? {})) {
    if (answer.delivered_at !== undefined) continue;
    responses[key] = answer.response;
    if (answer.sent_at !== undefined) uncertain.push(key);
  }
  return Object.keys(responses).length > 0 ? { responses, uncertain } : null;
}
