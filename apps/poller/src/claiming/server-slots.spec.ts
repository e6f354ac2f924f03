// Guards the task capacity rule: a claim takes no more than the worker's free slots and each server's free room, so a hung server fills only its own slots.
import { ServerSlots } from './server-slots';

const on = (server: string) => ({ server });

it('claimable is the free total, bounded by the room of the configured servers', () => {
  const slots = new ServerSlots(
    10,
    new Map([
      ['a', 2],
      ['b', 3],
    ]),
  );
  expect(slots.claimable()).toBe(5);
  expect(slots.room()).toEqual(
    new Map([
      ['a', 2],
      ['b', 3],
    ]),
  );
  expect(slots.acquire(on('a'))).toBe(true);
  expect(slots.acquire(on('a'))).toBe(true);
  expect(slots.acquire(on('a'))).toBe(false);
  expect(slots.saturated()).toEqual(['a']);
  expect(slots.claimable()).toBe(3);
  slots.release(on('a'));
  expect(slots.saturated()).toEqual([]);
  expect(slots.claimable()).toBe(4);
});

it('the worker total bounds every server', () => {
  const slots = new ServerSlots(
    2,
    new Map([
      ['a', 8],
      ['b', 8],
    ]),
  );
  expect(slots.acquire(on('a'))).toBe(true);
  expect(slots.acquire(on('b'))).toBe(true);
  expect(slots.claimable()).toBe(0);
  expect(slots.acquire(on('b'))).toBe(false);
  expect(slots.inUse()).toBe(2);
});

it('saturatedWith counts the servers a claimed batch fills before it starts', () => {
  const slots = new ServerSlots(
    10,
    new Map([
      ['a', 2],
      ['b', 3],
    ]),
  );
  slots.acquire(on('a'));
  expect(slots.saturatedWith([])).toBe(0);
  expect(slots.saturatedWith([on('a')])).toBe(1);
  expect(slots.saturatedWith([on('a'), on('b'), on('b'), on('b')])).toBe(2);
});

it('a server missing from the config is bounded by the total only', () => {
  const slots = new ServerSlots(2, new Map());
  expect(slots.claimable()).toBe(2);
  expect(slots.acquire(on('gone'))).toBe(true);
  expect(slots.acquire(on('gone'))).toBe(true);
  expect(slots.acquire(on('gone'))).toBe(false);
  slots.release(on('gone'));
  expect(slots.claimable()).toBe(1);
});
