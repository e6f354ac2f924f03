/**
 * Resolves or rejects with `work`, or rejects with `onTimeout()` after `timeoutMs`. The timer is
 * always cleared, so a finished call leaves nothing behind (tests count timers and handles).
 */
export async function withDeadline<T>(
  work: Promise<T>,
  timeoutMs: number,
  onTimeout: () => Error,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), timeoutMs);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}
