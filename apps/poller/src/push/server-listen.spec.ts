// Guards the life of one server's push subscription: a task is covered only once a live stream
// acknowledged it, a new task re-listens without dropping the live stream, a notification wakes
// the local task it maps to, and a lost stream uncovers its tasks at once and is reopened.
import type { TaskListenHandlers } from '@app/upstream';
import { ServerListen } from './server-listen';

interface Opened {
  taskIds: readonly string[];
  handlers: TaskListenHandlers;
  closed: boolean;
}

const made: ServerListen[] = [];

function setup() {
  const opened: Opened[] = [];
  const woken: string[] = [];
  const lost: Array<{ locals: string[]; reason: string }> = [];
  const listen = new ServerListen({
    server: 's',
    open: (taskIds, handlers) => {
      const entry: Opened = { taskIds, handlers, closed: false };
      opened.push(entry);
      return { close: () => void (entry.closed = true) };
    },
    wake: (local) => woken.push(local),
    lost: (locals, reason) => lost.push({ locals, reason }),
    backoffMs: (failures) => 1000 * failures,
    log: () => undefined,
    forgetAfterMs: 60_000,
  });
  made.push(listen);
  return { listen, opened, woken, lost };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => {
  for (const listen of made.splice(0)) listen.close();
  expect(jest.getTimerCount()).toBe(0);
  jest.useRealTimers();
});

it('covers a task once a live stream acknowledged it, and wakes it on a notification', () => {
  const { listen, opened, woken } = setup();
  expect(listen.note('r1', 'task_1')).toBe(false);
  expect(opened).toHaveLength(0);
  jest.advanceTimersByTime(50);
  expect(opened[0].taskIds).toEqual(['r1']);
  expect(listen.note('r1', 'task_1')).toBe(false);
  opened[0].handlers.onAcknowledged(['r1']);
  expect(listen.note('r1', 'task_1')).toBe(true);
  opened[0].handlers.onTask('r1');
  opened[0].handlers.onTask('unknown');
  expect(woken).toEqual(['task_1']);
});

it('a new task re-listens with the grown set; the old stream serves until the new is acknowledged', () => {
  const { listen, opened } = setup();
  listen.note('r1', 'task_1');
  jest.advanceTimersByTime(50);
  opened[0].handlers.onAcknowledged(['r1']);
  expect(listen.note('r2', 'task_2')).toBe(false);
  jest.advanceTimersByTime(50);
  expect(opened[1].taskIds).toEqual(['r1', 'r2']);
  expect(opened[0].closed).toBe(false);
  expect(listen.note('r1', 'task_1')).toBe(true);
  opened[1].handlers.onAcknowledged(['r1', 'r2']);
  expect(opened[0].closed).toBe(true);
  expect(listen.note('r2', 'task_2')).toBe(true);
});

it('a refused replacement keeps the live stream and retries with backoff', () => {
  const { listen, opened, lost } = setup();
  listen.note('r1', 'task_1');
  jest.advanceTimersByTime(50);
  opened[0].handlers.onAcknowledged(['r1']);
  listen.note('r2', 'task_2');
  jest.advanceTimersByTime(50);
  opened[1].handlers.onEnd('listen refused: HTTP 503');
  expect(lost).toEqual([]);
  expect(listen.note('r1', 'task_1')).toBe(true);
  jest.advanceTimersByTime(999);
  expect(opened).toHaveLength(2);
  jest.advanceTimersByTime(1);
  expect(opened[2].taskIds).toEqual(['r1', 'r2']);
});

it('a lost stream uncovers its tasks at once and is reopened', () => {
  const { listen, opened, lost } = setup();
  listen.note('r1', 'task_1');
  listen.note('r2', 'task_2');
  jest.advanceTimersByTime(50);
  opened[0].handlers.onAcknowledged(['r1', 'r2']);
  opened[0].handlers.onEnd('the server ended the stream');
  expect(lost).toEqual([{ locals: ['task_1', 'task_2'], reason: 'the server ended the stream' }]);
  expect(listen.note('r1', 'task_1')).toBe(false);
  jest.advanceTimersByTime(0);
  expect(opened).toHaveLength(2);
  // Dropped by its owner (the server left `ready`): the same at once.
  opened[1].handlers.onAcknowledged(['r1', 'r2']);
  listen.drop('the upstream is degraded');
  expect(lost[1]).toEqual({ locals: ['task_1', 'task_2'], reason: 'the upstream is degraded' });
  expect(opened[1].closed).toBe(true);
});

it('a task that ended is left out of the next listen', () => {
  const { listen, opened } = setup();
  listen.note('r1', 'task_1');
  listen.note('r2', 'task_2');
  listen.forget('r1');
  jest.advanceTimersByTime(50);
  expect(opened[0].taskIds).toEqual(['r2']);
});
