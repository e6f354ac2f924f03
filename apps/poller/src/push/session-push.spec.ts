// Guards the 2025-11-25 side of push (docs/connections.md, "Push"): a session is trusted only
// once it has pushed, its end sends its tasks back to the normal interval, and a stdio server's
// next child, pushing under the same key, is trusted again only once it has pushed itself.
import { SessionPush } from './session-push';

function push() {
  const woken: string[] = [];
  const lost: Array<{ locals: string[]; reason: string }> = [];
  const sessions = new SessionPush({
    wake: (local) => woken.push(local),
    lost: (locals, reason) => lost.push({ locals, reason }),
    forgetAfterMs: 60_000,
  });
  return { sessions, woken, lost };
}

it('covers the tasks of a session once its stream has pushed, and wakes the one it names', () => {
  const { sessions, woken } = push();
  expect(sessions.note('s', 'sess-1', 'remote-1', 'task_1')).toBe(false);
  sessions.status('s', 'sess-1', 'remote-1');
  expect(woken).toEqual(['task_1']);
  expect(sessions.note('s', 'sess-1', 'remote-1', 'task_1')).toBe(true);
  // Another session of the same server has not pushed: not covered.
  expect(sessions.note('s', 'sess-2', 'remote-2', 'task_2')).toBe(false);
});

it("a session's end sends its covered tasks back, and nothing is covered until a push", () => {
  const { sessions, lost } = push();
  sessions.status('s', 'stdio child of s', 'remote-0');
  expect(sessions.note('s', 'stdio child of s', 'remote-1', 'task_1')).toBe(true);
  sessions.ended('stdio child of s', 'the transport closed');
  expect(lost).toEqual([{ locals: ['task_1'], reason: 'the transport closed' }]);
  // The next child pushes under the same key: trusted once it has pushed, not before.
  expect(sessions.note('s', 'stdio child of s', 'remote-2', 'task_2')).toBe(false);
  sessions.status('s', 'stdio child of s', 'remote-2');
  expect(sessions.note('s', 'stdio child of s', 'remote-2', 'task_2')).toBe(true);
  // Its end reports only what it covered since.
  sessions.ended('stdio child of s', 'the transport closed');
  expect(lost[1]).toEqual({ locals: ['task_2'], reason: 'the transport closed' });
});

it('an end never heard of a session that did not push reports nothing', () => {
  const { sessions, lost } = push();
  sessions.note('s', 'sess-1', 'remote-1', 'task_1');
  sessions.ended('sess-1', 'closed');
  sessions.ended('sess-unknown', 'closed');
  expect(lost).toEqual([]);
});
