import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CliUsageError, parseCliOptions, type DemoOptions } from './cli-options.parser';
import type { DemoContext } from './demo-context.interface';
import { createDemoServer } from './demo-server.factory';
import { DemoTaskStore } from './demo-task.store';
import { JobRegistry, type PersistedState, type StateRecord } from './job.registry';
import { TaskListen2026 } from './push/task-listen-2026';
import { TaskPush2025 } from './push/task-push-2025';
import { Task2026Store } from './mcp-2026/task-2026.store';
import { tapTransport } from './message-tap.middleware';
import { StateFileRepository } from './state-file.repository';

/** Starts stdio; returns how to stop it. stdout belongs to the protocol, so logs go to stderr. */
async function startStdio(context: DemoContext): Promise<() => Promise<void>> {
  const server = createDemoServer(context);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  tapTransport(transport, context, {
    onDrop: () => {
      process.stderr.write('demo-server: dropping the connection after initialize (fault)\n');
      process.exit(1);
    },
  });
  return () => server.close();
}

function parseOrExit(): DemoOptions {
  try {
    return parseCliOptions(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof CliUsageError)) throw error;
    process.stderr.write(`demo-server: ${error.message}\n`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const options = parseOrExit();
  const stateFile = options.stateFile
    ? new StateFileRepository<PersistedState, StateRecord>(options.stateFile)
    : undefined;
  const registry = new JobRegistry(stateFile);
  const context: DemoContext = {
    options,
    registry,
    taskStore: new DemoTaskStore(registry),
    tasks2026: new Task2026Store(),
    extraToolAdded: false,
  };
  if (!options.noPush) {
    const listen2026 = new TaskListen2026(context.tasks2026);
    const push2025 = new TaskPush2025(registry);
    context.tasks2026.onTouched = (task, created) => listen2026.touched(task, created);
    context.taskStore.onCancelled = (taskId) => push2025.touched(taskId);
    context.listen2026 = listen2026;
    context.push2025 = push2025;
  }

  let stop: () => Promise<void>;
  let listeningUrl: string | undefined;
  if (options.transport === 'stdio' && options.strict2026) {
    const { serveStdio2026 } = await import('./mcp-2026/stdio-2026.server');
    stop = serveStdio2026(context);
  } else if (options.transport === 'stdio') {
    stop = await startStdio(context);
  } else {
    // Loaded only here: a stdio server (spawned per session by the pollers) skips the HTTP
    // transport's modules, about a seventh of its start-up CPU.
    const { startHttpServer } = await import('./demo-http.server');
    const http = await startHttpServer(context);
    stop = http.close;
    listeningUrl = http.url;
  }

  let stopping = false;
  const shutdown = (reason: string): void => {
    // A second signal means "now": the first one may be stuck closing a hung transport.
    if (stopping) process.exit(1);
    stopping = true;
    process.stderr.write(`demo-server: shutting down (${reason})\n`);
    registry.save();
    stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  // A stdio server whose client went away has no one left to serve.
  if (options.transport === 'stdio') process.stdin.once('end', () => shutdown('stdin closed'));
  // Tests wait for exactly this line; with --port 0 it carries the real port. Written once the
  // signal handlers are in place: a SIGTERM sent as soon as it is read ends the server cleanly,
  // where before the handlers it killed it (test/foundation/processes/failed-test-output.test.ts
  // saw "ended by SIGTERM" once).
  if (listeningUrl) process.stdout.write(`demo-server listening on ${listeningUrl}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `demo-server: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
