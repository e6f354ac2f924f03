// Guards against a global step (Express middleware, a Nest module's middleware, a global guard,
// interceptor, pipe or filter) added to the API without deciding what the submit fast path, which
// bypasses them all, does about it: the running app's globals must be those FAST_PATH_STEPS lists.
import { FAST_PATH_STEPS } from '../../apps/api/src/tasks/submit-fast-path.steps';
import { useTestDatabase } from '../helpers/db';
import { startNode } from '../helpers/node-process';

const db = useTestDatabase();

/** The globals of the compiled app (test/fixtures/api-globals.ts), by kind. */
async function runningGlobals(): Promise<Record<string, string[]>> {
  const child = startNode('test/fixtures/api-globals.js', [], {
    DATABASE_URL: db.url,
    LOG_LEVEL: 'error',
  });
  const line = await child.waitForLine(/^\{"middleware"/, 60_000);
  expect(await child.exited).toBe(0);
  return JSON.parse(line) as Record<string, string[]>;
}

it('lists every global step of the app, in order, with what the fast path does instead', async () => {
  const running = await runningGlobals();
  const listed = Object.fromEntries(
    Object.entries(FAST_PATH_STEPS).map(([kind, steps]) => [kind, steps.map(([name]) => name)]),
  );
  // The steps this path must mirror are there: the listing compared something.
  expect(running.middleware).toContain('bearerFirst');
  expect(running.guards).toContain('AuthGuard');
  expect(running).toEqual(listed);
});
