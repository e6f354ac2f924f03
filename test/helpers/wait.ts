/**
 * Polls `probe` until it returns a value other than undefined; fails at the deadline with the
 * last value or error, so a timeout says what was seen. The test-side replacement for sleeping.
 */
export async function waitUntil<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  what: string,
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
        `timed out after ${timeoutMs} ms waiting for ${what} (last: ${String(last)})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
