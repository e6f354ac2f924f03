import { createWriteStream, WriteStream } from 'node:fs';
import { NodeProcess, startNode } from '../../test/helpers/node-process';

/**
 * One API process; two of them sit behind the driver, which alternates between them. Everything
 * it writes (stdout and stderr) goes to `logFile` in the run's work directory as it comes, so a
 * replica that fails, even before it listens, leaves its reason behind.
 */
export class ApiReplica {
  private process?: NodeProcess;
  private log?: WriteStream;
  url = '';

  constructor(
    private readonly databaseUrl: string,
    readonly logFile: string,
  ) {}

  async start(): Promise<void> {
    this.process = startNode('apps/api/main.js', [], {
      DATABASE_URL: this.databaseUrl,
      PORT: '0',
      METRICS_PORT: '0',
      // info: the listening line that tells the bound port is an info line.
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      // The driver submits in bursts from one user; the limiter is not what this run tests.
      SUBMIT_RATE_LIMIT_PER_MINUTE: '0',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    });
    const log = createWriteStream(this.logFile, { flags: 'a' });
    this.log = log;
    this.process.child.stdout?.on('data', (chunk: Buffer) => log.write(chunk));
    this.process.child.stderr?.on('data', (chunk: Buffer) => log.write(chunk));
    try {
      const line = await this.process.waitForLine(/api listening on port \d+/, 30_000);
      this.url = `http://127.0.0.1:${/port (\d+)/.exec(line)![1]}`;
    } catch (error) {
      throw new Error(
        `an API replica did not start (${String(error).split(';')[0]}): ${this.exitReport()}; ` +
          `its whole output is in ${this.logFile}`,
      );
    }
  }

  exited(): boolean {
    const child = this.process?.child;
    return child !== undefined && (child.exitCode !== null || child.signalCode !== null);
  }

  /** Why it exited: the exit code or signal and its last output lines. */
  exitReport(): string {
    const child = this.process?.child;
    const tail = [...(this.process?.lines ?? []), ...(this.process?.stderr ?? [])].slice(-8);
    return `exit ${String(child?.exitCode ?? child?.signalCode)}; last output: ${tail.join(' | ').slice(0, 1500)}`;
  }

  async stop(): Promise<void> {
    await this.process?.kill('SIGTERM');
    await new Promise<void>((resolve) => (this.log ? this.log.end(resolve) : resolve()));
  }
}
