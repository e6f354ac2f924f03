// A value a test file makes in beforeAll and disposes of in afterAll, held at module level.
import { openProcessScope } from './process-scope';

/**
 * Registers `make` in beforeAll and `dispose` in afterAll, and returns a stand-in for the value:
 * each property read reaches the value made for this file (methods bound to it), so a file can
 * keep the fixture in a module-level const. A read before beforeAll has run throws, naming
 * `what`. Jest runs afterAll hooks in the order they were declared: those declared after this
 * call run after `dispose`, so nothing of theirs may use the value then. It opens the file's
 * process scope (process-scope.ts): the processes `make` starts (an API, say) are stopped after
 * the file's last afterAll hook, if `dispose` has not.
 */
export function useFixture<T extends object>(
  what: string,
  make: () => Promise<T>,
  dispose: (value: T) => unknown,
): T {
  openProcessScope();
  let value: T | undefined;
  beforeAll(async () => {
    value = await make();
  });
  afterAll(async () => {
    if (value) await dispose(value);
  });
  return new Proxy({} as T, {
    get(_, key) {
      if (!value) throw new Error(`${what} exists from beforeAll on`);
      const field: unknown = Reflect.get(value, key, value);
      return typeof field === 'function'
        ? (field as (...a: unknown[]) => unknown).bind(value)
        : field;
    },
  });
}
