/**
 * Polls `probe` until it returns a value other than undefined; fails at the deadline with the
 * last value or error, so a timeout says what was seen. The test-side replacement for sleeping.
 * `what` may be a function, called at the deadline, to add what the processes said meanwhile.
 */
export async function waitUntil<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string | (() => string),
  timeoutMs = 15_000,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
      last = 'not yet';
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()} (last: ${String(last)})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Reads a task (or anything with a status) until its status is one of `statuses` and returns
 * that read; a timeout names the last status seen. The tests' one "wait until the task is X".
 */
export async function waitForStatus<T extends { status?: unknown }>(
  read: () => Promise<T>,
  statuses: string | readonly string[],
  { timeoutMs, intervalMs }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const wanted = typeof statuses === 'string' ? [statuses] : statuses;
  let last: string | undefined;
  return waitUntil(
    async () => {
      const value = await read();
      last = String(value.status);
      return wanted.includes(last) ? value : undefined;
    },
    () => `status ${wanted.join('|')} (last seen: ${last ?? 'none'})`,
    timeoutMs,
    intervalMs,
  );
}
