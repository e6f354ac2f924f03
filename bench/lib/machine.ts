import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  postgres: string;
  graphileWorker: string;
  postgresSettings: Record<string, string>;
}

const SETTINGS = ['shared_buffers', 'synchronous_commit', 'fsync', 'max_connections', 'work_mem'];

/** What every figure is reported with: the machine, the versions and the server's settings. */
export async function describeMachine(adminUrl: string): Promise<MachineInfo> {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? 'unknown';
  const client = new Client({ connectionString: adminUrl });
  // A connection lost between statements is an 'error' event: the next query fails on its own.
  client.on('error', () => undefined);
  await client.connect();
  try {
    const version = await client.query<{ server_version: string }>('SHOW server_version');
    const settings: Record<string, string> = {};
    for (const name of SETTINGS) {
      const row = await client.query<Record<string, string>>(`SHOW ${name}`);
      settings[name] = row.rows[0][name];
    }
    return {
      cpu: model.trim(),
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      postgres: version.rows[0].server_version,
      graphileWorker: packageVersion('graphile-worker'),
      postgresSettings: settings,
    };
  } finally {
    await client.end();
  }
}

function packageVersion(name: string): string {
  const file = join(
    require.resolve(name).split(`node_modules/${name}`)[0],
    'node_modules',
    name,
    'package.json',
  );
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
