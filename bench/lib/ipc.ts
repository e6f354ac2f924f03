/** Messages between a benchmark and its worker processes (Node IPC). */
export type WorkerMessage =
  | { type: 'ready' }
  | {
      type: 'done';
      startedAt: number;
      endedAt: number;
      processed: number;
      lost: number;
      /** Optional per-statement timings, summed (lease workers). */
      claimMs?: number;
      claims?: number;
      finishMs?: number;
      finishes?: number;
      /** The worker's own CPU (user and system, µs) over the measured part (mcp-call workers). */
      cpuMicros?: number;
    }
  | { type: 'error'; message: string };

export type ParentMessage = { type: 'go' } | { type: 'stop' };

export function send(message: WorkerMessage): void {
  process.send?.(message);
}

/** Resolves at the parent's first message of `type`. */
export function nextParentMessage(type: ParentMessage['type']): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (message: ParentMessage): void => {
      if (message.type !== type) return;
      process.off('message', onMessage);
      resolve();
    };
    process.on('message', onMessage);
  });
}

/** A worker's top level: report a failure to the parent instead of dying silently. */
export function runWorker(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      send({
        type: 'error',
        message: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
      process.exit(1);
    },
  );
}
