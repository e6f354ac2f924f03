import { DataSource } from 'typeorm';

/** `keys create|list|revoke`: implemented with the API's key store (issue 6). */
export async function runKeysCommand(_dataSource: DataSource, _args: string[]): Promise<void> {
  process.stderr.write('keys: not available yet\n');
  process.exitCode = 69;
}
