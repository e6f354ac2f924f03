import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Closes a closing server's connections, so the process exits once its last answer is sent.
 * `server.close()` stops accepting and closes the connections Node counts as idle at that
 * moment, but not one that was opened and has sent no request yet (a proxy's pool or a
 * pre-connecting client leaves such connections): the server then waits for the client to close
 * it, for good if the client never does (on Node 20, over ten minutes in a test before it was
 * stopped). From {@link closeWhenAnswered} on, a connection with nothing to answer is closed at
 * once and a busy one as soon as its last answer has been sent (the API's held `Prefer: wait`
 * submits and event streams end first; docs/operations.md, "Grace periods"): its written bytes
 * are flushed, then the socket is destroyed, whatever the client does. A connection accepted
 * after that, in the moment before the port closes, is refused as the closed port would refuse
 * it. Every HTTP server of the gateway closes through it: the API's port and each process's
 * metrics and health port (`startMetricsServer`).
 */
export class ConnectionCloser {
  /** Open connections, each with its requests not yet answered. */
  private readonly connections = new Map<Socket, number>();
  private closing = false;

  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      if (this.closing) {
        socket.destroy();
        return;
      }
      this.connections.set(socket, 0);
      socket.once('close', () => this.connections.delete(socket));
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const socket = req.socket;
      this.connections.set(socket, (this.connections.get(socket) ?? 0) + 1);
      res.once('close', () => {
        const unanswered = this.connections.get(socket);
        if (unanswered === undefined) return; // the connection has closed already
        const left = unanswered - 1;
        this.connections.set(socket, left);
        if (this.closing && left === 0) socket.destroySoon();
      });
    });
  }

  /** From now on no connection stays open: idle ones close now, busy ones after their answer. */
  closeWhenAnswered(): void {
    this.closing = true;
    for (const [socket, unanswered] of this.connections) if (unanswered === 0) socket.destroySoon();
  }
}
