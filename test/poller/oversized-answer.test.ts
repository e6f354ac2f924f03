// Guards against an upstream's oversized answer taking a poller down or passing for another
// failure: a real poller whose server sets `maxMessageBytes` refuses a status answer over it,
// keeps the task working with the refusal as its last error (a consumer reads "too large to
// read"; it is retried with backoff), and goes on with the server's other tasks
// (docs/connections.md, "Message size"). Without the bound the oversized task completes.
import { TransientClass, transientClass } from '@app/views';
import { useFleet } from '../helpers/fleet';
import { insertFleetTasks, taskStates } from '../helpers/fleet-tasks';
import { demoServerEntry } from '../helpers/processes';
import { waitForStatus, waitUntil } from '../helpers/wait';

const fleet = useFleet();
const state = (id: string) => async () => (await taskStates(fleet.db, [id])).get(id)!;

it('a status answer over maxMessageBytes is refused, the task kept working; the poller serves the rest', async () => {
  const demo = await fleet.demo();
  const poller = await fleet.poller({
    demo: { ...demoServerEntry(demo.url, 'big'), maxMessageBytes: 64 * 1024 },
  });
  // The demo's ordinary status answer carries the result, with `result_size` bytes of filler.
  const [big, small] = await insertFleetTasks(fleet.db, [
    { toolset: 'big', server: 'demo', input: { duration_ms: 200, result_size: 1024 * 1024 } },
    { toolset: 'big', server: 'demo', input: { duration_ms: 200, result_size: 1000 } },
  ]);
  await waitForStatus(state(small), 'completed');
  const refused = await waitUntil(async () => {
    const now = await state(big)();
    return now.consecutive_errors >= 1 ? now : undefined;
  }, 'the oversized status answer to be refused');
  expect(refused.status).toBe('working');
  expect(refused.last_error).toContain('longer than 65536 bytes (maxMessageBytes)');
  expect(transientClass(refused.last_error!)).toBe(TransientClass.TooLarge);
  // The poller lives on and still takes work from the same server.
  const [after] = await insertFleetTasks(fleet.db, [
    { toolset: 'big', server: 'demo', input: { duration_ms: 200, result_size: 1000 } },
  ]);
  await waitForStatus(state(after), 'completed');
  expect(poller.child.exitCode).toBeNull();
});
