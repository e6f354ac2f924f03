import { NodeProcess, startNode } from '../../test/helpers/node-process';

/**
 * One HTTP demo MCP server on a fixed port with a state file, so it can be killed and started
 * again where the pollers expect it, with its jobs and counters intact (native tasks are lost:
 * the demo server keeps those in memory only, as a real upstream restart would).
 */
export class DemoUpstream {
  private process?: NodeProcess;
  restarts = 0;

  constructor(
    readonly name: string,
    readonly port: number,
    readonly stateFile: string,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.process?.child.pid;
  }

  async start(): Promise<void> {
    const args = ['--transport', 'http', '--port', String(this.port)];
    this.process = startNode('apps/demo-server/main.js', [...args, '--state-file', this.stateFile]);
    await this.process.waitForLine(/demo-server listening on http:/, 15_000);
  }

  /** SIGKILL (a crash: no goodbye to clients), then start again on the same port and file. */
  async crashAndRestart(): Promise<void> {
    await this.process?.kill('SIGKILL');
    await this.start();
    this.restarts++;
  }

  /** SIGSTOP: the port still accepts connections, nothing answers. */
  hang(): void {
    this.process?.child.kill('SIGSTOP');
  }

  resume(): void {
    this.process?.child.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    this.resume();
    await this.process?.kill('SIGTERM');
  }
}
