// Guards against an answer being sent again once delivered, or a possibly-sent one not being
// flagged uncertain (the flag decides whether a retried call may go out again).
import type { ClaimedTask } from '@app/persistence';
import { pendingAnswers } from './input-delivery';

const row = (inputResponses: ClaimedTask['inputResponses']): ClaimedTask =>
  ({ inputResponses }) as ClaimedTask;

describe('pendingAnswers', () => {
  it('none stored, or all delivered: nothing to send', () => {
    expect(pendingAnswers(row(null))).toBeNull();
    expect(
      pendingAnswers(
        row({ a: { response: 1, received_at: 't', sent_at: 't', delivered_at: 't' } }),
      ),
    ).toBeNull();
  });

  it('undelivered answers are pending; those marked sent are uncertain', () => {
    expect(
      pendingAnswers(
        row({
          fresh: { response: { action: 'accept' }, received_at: 't' },
          maybe: { response: 2, received_at: 't', sent_at: 't' },
          done: { response: 3, received_at: 't', sent_at: 't', delivered_at: 't' },
        }),
      ),
    ).toEqual({ responses: { fresh: { action: 'accept' }, maybe: 2 }, uncertain: ['maybe'] });
  });
});
