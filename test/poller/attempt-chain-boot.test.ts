// Guards against a poller booting with timeouts whose worst attempt chain cannot fit its lease
// (docs/leases.md, "Attempt deadlines"): one connect plus one call fits (the old check), but a
// native submit over HTTP chains two connects and a call, so it would be cut by its deadline.
import { useProcesses } from '../helpers/process-scope';
import { writeServersFile } from '../helpers/processes';

const DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/postgres';
// The poller runs in the file's process scope (docs/testing.md, "Processes go through a fixture").
const processes = useProcesses();

it('exits 78 naming LEASE_MS, the server, the toolset, the phase and the numbers', async () => {
  const serversFile = writeServersFile({
    upstream: {
      url: 'http://127.0.0.1:9/mcp',
      protocolVersion: '2025-11-25',
      connectTimeoutMs: 1000,
      callTimeoutMs: 1000,
      taskToolsets: [{ name: 'native', contract: 'mcp-tasks', tool: 'demo_task_required' }],
    },
  });
  const child = processes.node('apps/poller/main.js', [], {
    DATABASE_URL,
    MCP_SERVERS_FILE: serversFile,
    LEASE_MS: '3000',
    METRICS_PORT: '0',
  });
  expect(await child.exited).toBe(78);
  const text = child.stderr.join('\n');
  expect(text).toContain(
    'server "upstream": LEASE_MS (3000) is too short for the mcp-tasks submit of toolset ' +
      '"native": 2 × connectTimeoutMs (1000) + 1 × callTimeoutMs (1000) = 3000 ms must fit in ' +
      'LEASE_MS minus the attempt margin (100 ms)',
  );
});
