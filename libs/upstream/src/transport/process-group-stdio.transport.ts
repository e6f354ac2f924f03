import { spawn, type ChildProcess } from 'node:child_process';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { LineBound, MessageTooLargeError } from './message-bound';
import { groupAlive, type ProcessGroupRegistry } from './process-group.registry';

export interface StdioServerParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** The longest stdout line (one message) taken; a longer one ends the child. Unset: no bound. */
  maxMessageBytes?: number;
  /** Lines the child writes to stderr (bounded), for debug logs. */
  onStderr?: (line: string) => void;
}

/** connections.md requirement 9: stdin closed → 2 s → SIGTERM → 2 s → SIGKILL. */
const GRACE_MS = 2000;
const GROUP_POLL_MS = 25;

/**
 * A stdio client transport that spawns the server as a process-group leader and ends the whole
 * group. The SDK's StdioClientTransport signals only its direct child, so `npx`-style wrappers
 * orphan the real server; this one does not.
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child?: ChildProcess;
  private readonly readBuffer = new ReadBuffer();
  private readonly lineBound?: LineBound;
  private exited = false;
  private closed = false;
  private ending?: Promise<void>;

  constructor(
    private readonly params: StdioServerParams,
    private readonly registry?: ProcessGroupRegistry,
  ) {
    if (params.maxMessageBytes !== undefined)
      this.lineBound = new LineBound(params.maxMessageBytes);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** True while the child has not exited: the liveness signal of a stdio server. */
  get alive(): boolean {
    return this.child !== undefined && !this.exited;
  }

  start(): Promise<void> {
    if (this.child) throw new Error('ProcessGroupStdioTransport already started');
    return new Promise((resolve, reject) => {
      const child = spawn(this.params.command, this.params.args, {
        env: { ...getDefaultEnvironment(), ...this.params.env },
        cwd: this.params.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
        shell: false,
      });
      this.child = child;
      child.once('error', (error) => {
        // A spawn failure (ENOENT) emits 'error' and no 'spawn'; later errors go to onerror.
        if (child.pid === undefined) reject(error);
        else this.onerror?.(error);
        this.markExited();
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) this.registry?.add(child.pid);
        resolve();
      });
      child.once('exit', () => this.markExited());
      child.stdout?.on('data', (chunk: Buffer) => this.receive(chunk));
      child.stdout?.on('error', (error) => this.onerror?.(error));
      child.stdin?.on('error', (error) => this.onerror?.(error));
      this.pipeStderr(child);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (this.exited || this.closed || !stdin || !stdin.writable) {
      return Promise.reject(new StdioNotConnectedError('the stdio server is not running'));
    }
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (error) => (error ? reject(error) : resolve()));
    });
  }

  /** Ends the whole process group; resolves when it is gone (at most about 4 s). */
  close(): Promise<void> {
    this.closed = true;
    this.ending ??= this.endGroup();
    return this.ending;
  }

  private async endGroup(): Promise<void> {
    const child = this.child;
    const pgid = child?.pid;
    if (!child || pgid === undefined) return this.markExited();
    child.stdin?.end();
    await this.waitUntil(() => this.exited && !groupAlive(pgid), GRACE_MS);
    for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
      if (!groupAlive(pgid)) break;
      try {
        process.kill(-pgid, signal);
      } catch {
        break; // ESRCH: the group emptied between the check and the signal.
      }
      await this.waitUntil(() => !groupAlive(pgid), GRACE_MS);
    }
    await this.waitUntil(() => this.exited, GRACE_MS);
    child.stdout?.destroy();
    child.stderr?.destroy();
    child.stdin?.destroy();
    this.registry?.remove(pgid);
  }

  private markExited(): void {
    if (this.exited) return;
    this.exited = true;
    this.readBuffer.clear();
    // A crashed leader may leave group members (a wrapper's grandchild): end them as well.
    if (!this.closed) void this.close();
    this.onclose?.();
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    if (this.lineBound?.exceededBy(chunk)) {
      // Held whole, the line could exhaust the poller's memory: the child is ended instead, and
      // its requests fail as a crashed server's do (the supervisor starts it again).
      this.readBuffer.clear();
      this.onerror?.(new MessageTooLargeError(this.lineBound.maxBytes));
      void this.close();
      return;
    }
    this.readBuffer.append(chunk);
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.readBuffer.readMessage();
      } catch (error) {
        this.onerror?.(error as Error);
        continue;
      }
      if (message === null) return;
      this.onmessage?.(message);
    }
  }

  private pipeStderr(child: ChildProcess): void {
    let pending = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      pending = (pending + chunk.toString('utf8')).slice(-8192);
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) if (line) this.params.onStderr?.(line.slice(0, 500));
    });
  }

  /** Polls with a deadline: process-group membership has no event to wait on. */
  private async waitUntil(done: () => boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done() && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, GROUP_POLL_MS));
    }
  }
}

/** A send on a child that is gone: nothing was written. */
export class StdioNotConnectedError extends Error {
  override readonly name = 'StdioNotConnectedError';
}
