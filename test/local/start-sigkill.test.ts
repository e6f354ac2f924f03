// Guards against `npm start` leaving its processes behind when it is killed with SIGKILL (an IDE's
// stop button, a closed terminal): the API, the poller, the demo server and the embedded Postgres
// kept running and kept their ports, and the next start found them taken.
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '@app/dev-db';
import { waitUntil } from '../helpers/wait';
import { useProcesses } from '../helpers/process-scope';

const LAUNCHER = join(__dirname, '..', '..', 'dist', 'apps', 'local', 'src', 'main.js');
const DEFAULT_SERVERS = join(__dirname, '..', '..', 'deploy', 'local', 'mcp-servers.json');
// One folder for every run: the embedded cluster is created once and reused, as .data/ is.
const DATA = join(tmpdir(), `mtg-start-sigkill-${process.getuid?.() ?? 0}`);
// The launcher stops with the file; its descendants, which the scope does not know, are killed by
// the test's finally if it ends early.
const processes = useProcesses();

/** Fields 3 and on of /proc/<pid>/stat (state, ppid, …), or null once the process is gone. */
function stat(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** A process that still runs (a zombie holds no port and waits only to be reaped). */
function running(pid: number): boolean {
  const fields = stat(pid);
  return fields !== null && fields[0] !== 'Z';
}

/** Every process descending from `root`, by the parent links in /proc. */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    const fields = Number.isInteger(pid) ? stat(pid) : null;
    if (fields) parent.set(pid, Number(fields[1]));
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const [child, ppid] of parent) {
      if (ppid === pid) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(root);
  return found;
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * `npm start`'s default config shows every feature: each toolset of deploy/local/mcp-servers.json
 * is listed and available (the strict 2026-07-28 servers' too, over HTTP and over stdio, served
 * without a session: docs/connections.md, "Which side serves"), and a task completes on each
 * server found at run time to need no session and on the 2025-11-25 stdio child.
 */
async function expectEveryDefaultToolsetServes(base: string): Promise<void> {
  const file = JSON.parse(readFileSync(DEFAULT_SERVERS, 'utf8')) as {
    mcpServers: Record<string, { taskToolsets: { name: string }[] }>;
  };
  const names = Object.values(file.mcpServers).flatMap((s) => s.taskToolsets.map((t) => t.name));
  expect(names).toEqual(expect.arrayContaining(['demo-strict', 'demo-strict-sync']));
  const key = readFileSync(join(DATA, 'dev-api-key'), 'utf8').trim();
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  type Toolset = { name: string; available: boolean; unavailable_reason: string | null };
  let listed: Toolset[] = [];
  await waitUntil(
    async () => {
      const res = await fetch(`${base}/v1/toolsets`, { headers });
      listed = ((await res.json()) as { items: Toolset[] }).items;
      return names.every((name) => listed.some((t) => t.name === name && t.available))
        ? true
        : undefined;
    },
    () => `every default toolset available (listed: ${JSON.stringify(listed)})`,
    60_000,
    200,
  );
  // One task on each server found at run time to need no session (over HTTP and over stdio),
  // and one on the child that keeps a 2025-11-25 session.
  const ended = await Promise.all(
    ['demo-strict', 'demo-stdio-2026', 'demo-stdio-2025'].map(async (toolset) => {
      const submitted = await fetch(`${base}/v1/threads/start-sigkill/tasks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ toolset, arguments: { duration_ms: 100 } }),
      });
      expect(submitted.status).toBe(201);
      const { task_id: id } = (await submitted.json()) as { task_id: string };
      return waitUntil(
        async () => {
          const res = await fetch(`${base}/v1/tasks/${id}`, { headers });
          const { status } = (await res.json()) as { status: string };
          return ['completed', 'failed', 'cancelled'].includes(status) ? status : undefined;
        },
        `the ${toolset} task to end`,
        60_000,
        100,
      );
    }),
  );
  expect(ended).toEqual(['completed', 'completed', 'completed']);
}

it('ends the API, the poller, the demo server and Postgres, and frees their ports', async () => {
  if (!existsSync(LAUNCHER)) throw new Error(`${LAUNCHER} is missing: run \`npm run build\``);
  mkdirSync(DATA, { recursive: true });
  const ports = {
    PORT: await freePort(),
    METRICS_PORT: await freePort(),
    POLLER_METRICS_PORT: await freePort(),
    DEMO_SERVER_PORT: await freePort(),
  };
  // As `npm start` runs it, without DATABASE_URL: the embedded Postgres is one of its processes.
  const launcher = processes.spawn(process.execPath, [LAUNCHER], {
    env: {
      PATH: process.env.PATH ?? '',
      ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
      LOCAL_DATA_DIR: DATA,
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      LOG_FORMAT: 'json',
      NODE_ENV: 'test',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const lines: string[] = [];
  createInterface({ input: launcher.stdout! }).on('line', (line) => lines.push(line));
  createInterface({ input: launcher.stderr! }).on('line', (line) => lines.push(line));
  let started: number[] = [];
  try {
    await waitUntil(
      () =>
        lines.some((l) => l.startsWith('[poller]') && l.includes('worker claiming')) &&
        lines.some((l) => l.startsWith('[api]') && l.includes('api listening'))
          ? true
          : undefined,
      'the API listening and the poller claiming',
      90_000,
      100,
    );
    await expectEveryDefaultToolsetServes(`http://127.0.0.1:${ports.PORT}`);
    started = descendants(launcher.pid!);
    const postmaster = Number(
      readFileSync(
        join(
          /cluster lives in (\S+) instead/.exec(lines.join('\n'))?.[1] ?? join(DATA, 'postgres'),
          'postmaster.pid',
        ),
        'utf8',
      ).split('\n')[0],
    );
    // The guardian, the demo server, the poller, the API, the postmaster and its own processes.
    expect(started).toContain(postmaster);
    expect(started.length).toBeGreaterThanOrEqual(6);

    process.kill(launcher.pid!, 'SIGKILL');

    await waitUntil(
      () => (started.every((pid) => !running(pid)) ? true : undefined),
      'every process the launcher started to end',
      60_000,
      200,
    );
    for (const port of Object.values(ports)) expect(await portFree(port)).toBe(true);
  } finally {
    for (const pid of [launcher.pid!, ...started]) {
      try {
        if (running(pid)) process.kill(pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
  }
});
