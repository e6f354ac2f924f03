// Guards against one Ctrl-C on `npm start` reaching the poller twice (the terminal's group SIGINT
// plus the launcher's SIGTERM), which made it exit at once without draining.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { useTestDatabase } from '../helpers/db';
import { freePort } from '@app/dev-db';
import { waitForExit } from '../helpers/processes';
import { useProcesses } from '../helpers/process-scope';
import { waitUntil } from '../helpers/wait';

const LAUNCHER = join(__dirname, '..', '..', 'dist', 'apps', 'local', 'src', 'main.js');

const database = useTestDatabase();
// The launcher stops with the file; its children are its own to stop (the finally below kills
// its process group if the test ends early).
const processes = useProcesses();

it('stops every child gracefully, once, on a Ctrl-C sent to the whole process group', async () => {
  if (!existsSync(LAUNCHER)) throw new Error(`${LAUNCHER} is missing: run \`npm run build\``);
  const [port, metricsPort, pollerMetricsPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  // Its own process group, like a shell's foreground job: the test then signals the group, as a
  // terminal does on Ctrl-C.
  const launcher = processes.spawn(process.execPath, [LAUNCHER], {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: database.url,
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      POLLER_METRICS_PORT: String(pollerMetricsPort),
      LOG_FORMAT: 'json',
      NODE_ENV: 'test',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const lines: string[] = [];
  createInterface({ input: launcher.stdout! }).on('line', (line) => lines.push(line));
  createInterface({ input: launcher.stderr! }).on('line', (line) => lines.push(line));
  try {
    await waitUntil(
      () =>
        lines.some((l) => l.startsWith('[poller]') && l.includes('worker claiming'))
          ? true
          : undefined,
      'the poller claiming',
      60_000,
      100,
    );
    process.kill(-launcher.pid!, 'SIGINT');
    expect(await waitForExit(launcher, 60_000)).toBe(true);
    expect(launcher.exitCode).toBe(0);
    const poller = lines.filter((l) => l.startsWith('[poller]'));
    expect(poller.filter((l) => l.includes('second signal'))).toEqual([]);
    expect(poller.filter((l) => l.includes('"msg":"shutting down"'))).toHaveLength(1);
    expect(poller.some((l) => l.includes('"msg":"worker stopped"'))).toBe(true);
  } finally {
    if (launcher.exitCode === null && launcher.signalCode === null) {
      process.kill(-launcher.pid!, 'SIGKILL');
    }
  }
});
