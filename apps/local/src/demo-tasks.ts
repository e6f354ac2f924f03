/** The demo tasks `npm start` submits once, so the console has something to show. */
const DEMO_TASKS = [
  { key: 'npm-start-demo-1', toolset: 'demo-ordinary', arguments: { duration_ms: 3000 } },
  { key: 'npm-start-demo-2', toolset: 'demo-ask', arguments: {} },
];
const THREAD = 'demo';
/** The poller publishes the catalog shortly after it starts; a submit before that is a 422. */
const CATALOG_WAIT_MS = 60_000;
const POLL_MS = 500;

/**
 * Submits the demo tasks through the API as the development user, unless that user has tasks
 * already (a restart keeps what is there): one that finishes by itself, one that asks a question
 * to answer from the console or through its answer link (docs/console.md). Idempotency keys make
 * a repeat harmless. Never throws: the demo is a convenience, not part of starting.
 */
export async function submitDemoTasks(
  base: string,
  key: string,
  log: (line: string) => void,
): Promise<void> {
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  try {
    const deadline = Date.now() + CATALOG_WAIT_MS;
    for (;;) {
      const res = await fetch(`${base}/v1/toolsets`, { headers }).catch(() => null);
      const items = res?.ok ? ((await res.json()) as { items: { name: string }[] }).items : [];
      const names = new Set(items.map((t) => t.name));
      if (DEMO_TASKS.every((t) => names.has(t.toolset))) break;
      if (Date.now() > deadline)
        return log('demo tasks not submitted: the demo toolsets never showed');
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    const mine = await fetch(`${base}/v1/tasks?limit=1`, { headers });
    if (((await mine.json()) as { items: unknown[] }).items.length > 0) return;
    for (const task of DEMO_TASKS) {
      await fetch(`${base}/v1/threads/${THREAD}/tasks`, {
        method: 'POST',
        headers: { ...headers, 'Idempotency-Key': task.key },
        body: JSON.stringify({ toolset: task.toolset, arguments: task.arguments }),
      });
    }
    log(`demo tasks submitted to thread "${THREAD}" (one asks a question): ${base}/console`);
  } catch (error) {
    log(`demo tasks not submitted: ${String(error)}`);
  }
}
