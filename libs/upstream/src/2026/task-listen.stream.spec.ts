// Guards the push subscription's stream against an upstream that never ends an event: without
// the message bound its reader held every byte until the poller ran out of memory.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { httpServerConfig } from '../testing/server-config.fixture';
import { TaskListenStream } from './task-listen.stream';

const MAX_BYTES = 4096;

function sse(res: ServerResponse, message: object): void {
  res.write(`data: ${JSON.stringify(message)}\n\n`);
}

describe('TaskListenStream', () => {
  let server: Server;
  let url: string;
  let answer: (res: ServerResponse) => void;

  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        answer(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  /** Listens until the stream ends; `onTask` runs after each task notification is recorded. */
  function listen(
    onTask: () => void = () => undefined,
  ): Promise<{ acknowledged: string[]; tasks: string[]; ended: string }> {
    const acknowledged: string[] = [];
    const tasks: string[] = [];
    return new Promise((resolve) => {
      new TaskListenStream(httpServerConfig({ url, maxMessageBytes: MAX_BYTES }), ['r1', 'r2'], {
        onAcknowledged: (ids) => acknowledged.push(...ids),
        onTask: (id) => {
          tasks.push(id);
          onTask();
        },
        onEnd: (ended) => resolve({ acknowledged, tasks, ended }),
      }).start();
    });
  }

  const acknowledgement = {
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { notifications: { taskIds: ['r1', 'r2'] } },
  };

  it('reports the acknowledgement and each task notification, until the server ends it', async () => {
    answer = (res) => {
      sse(res, acknowledgement);
      sse(res, { jsonrpc: '2.0', method: 'notifications/tasks', params: { taskId: 'r2' } });
      res.end();
    };
    await expect(listen()).resolves.toEqual({
      acknowledged: ['r1', 'r2'],
      tasks: ['r2'],
      ended: 'the server ended the stream',
    });
  });

  it('ends the stream at an event longer than maxMessageBytes, events before it reported', async () => {
    let stream: ServerResponse | undefined;
    answer = (res) => {
      stream = res;
      sse(res, acknowledgement);
      sse(res, { jsonrpc: '2.0', method: 'notifications/tasks', params: { taskId: 'r1' } });
    };
    // Once the notification is read: one event that never ends, written in pieces, each under
    // the bound, past it in all.
    const { acknowledged, tasks, ended } = await listen(() => {
      stream?.write('data: ');
      for (let i = 0; i < 8; i++) stream?.write('x'.repeat(1024));
    });
    expect(acknowledged).toEqual(['r1', 'r2']);
    expect(tasks).toEqual(['r1']);
    expect(ended).toMatch(`longer than ${MAX_BYTES} bytes (maxMessageBytes)`);
  });
});
