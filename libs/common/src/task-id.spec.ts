// Guards against random IDs that repeat or leave their alphabet once they come from a pooled
// buffer of random bytes (each byte must be used once, across refills of the pool).
import { TASK_ID_PATTERN, newTaskId, randomId } from './task-id';

it('makes distinct task IDs of the pattern across many refills of the pool', () => {
  const ids = Array.from({ length: 5_000 }, () => newTaskId());
  expect(ids.every((id) => TASK_ID_PATTERN.test(id))).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
});

it('makes IDs longer than the pool and of any length between', () => {
  expect(randomId('x_', 5_000)).toMatch(/^x_[a-z2-7]{5000}$/);
  for (let length = 1; length < 40; length++) {
    expect(randomId('', length)).toMatch(new RegExp(`^[a-z2-7]{${length}}$`));
  }
});
