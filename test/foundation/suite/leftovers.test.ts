// Guards the suite's own hygiene (README.md, "Two commands"): the databases and fixture folders
// that earlier `jest` runs left behind are removed by the next run's setup, and a live run's
// never are.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Client } from 'pg';
import { clonePrefix, dropDeadRunDatabases, templateDatabaseName } from '../../helpers/db';
import { fixtureFolder, removeDeadFixtureFolders } from '../../helpers/leftovers';
import { useProcesses } from '../../helpers/process-scope';

const processes = useProcesses();

/** The pid of a process that existed and has exited (and been reaped) since. */
async function exitedPid(): Promise<number> {
  const child = processes.spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

async function existing(admin: Client, names: string[]): Promise<string[]> {
  const { rows } = await admin.query<{ datname: string }>(
    `SELECT datname FROM pg_database WHERE datname = ANY($1) ORDER BY datname`,
    [names],
  );
  return rows.map((row) => row.datname);
}

it("drops the template and clones of a run whose process is gone, and keeps a live run's", async () => {
  const admin = new Client({ connectionString: process.env.TEST_ADMIN_DATABASE_URL });
  await admin.connect();
  const deadTemplate = templateDatabaseName(await exitedPid());
  const deadClone = `${clonePrefix(deadTemplate)}0123456789`;
  // This worker stands in for a live run: its process exists.
  const liveClone = `${clonePrefix(templateDatabaseName(process.pid))}0123456789`;
  const made = [deadTemplate, deadClone, liveClone];
  try {
    for (const name of made) await admin.query(`CREATE DATABASE ${name}`);
    const dropped = await dropDeadRunDatabases(admin);
    expect(dropped).toEqual(expect.arrayContaining([deadTemplate, deadClone]));
    expect(dropped).not.toContain(liveClone);
    // Nor this run's own template, whose clones every other test file is using.
    expect(dropped).not.toContain(process.env.TEST_TEMPLATE_DATABASE);
    expect(await existing(admin, made)).toEqual([liveClone]);
  } finally {
    for (const name of made) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
});

it("removes the fixture folders of workers whose process is gone, and keeps a live one's", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mtg-leftovers-'));
  try {
    const dead = fixtureFolder(dataDir, await exitedPid());
    const live = fixtureFolder(dataDir, process.pid);
    const other = join(dataDir, 'postgres');
    for (const folder of [dead, live, other])
      mkdirSync(join(folder, 'fixtures'), { recursive: true });
    expect(removeDeadFixtureFolders(dataDir)).toEqual([basename(dead)]);
    expect(readdirSync(dataDir).sort()).toEqual([basename(live), 'postgres']);
    expect(existsSync(dead)).toBe(false);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
