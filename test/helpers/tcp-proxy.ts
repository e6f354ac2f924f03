import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 between the gateway's processes and Postgres, for the faults a network
 * or a failover produces and a real server cannot be asked for: every connection cut at once, new
 * connections refused while "the primary is down", the address switched to another server (a
 * promoted standby behind the same `-rw` name), the reply to one committed statement lost (then
 * the connection closed, or silent), and every open connection gone silent as a vanished host's
 * are.
 */
export interface TcpProxy {
  /** The port to point a `DATABASE_URL` at. */
  readonly port: number;
  /** New connections go to this port from now on; open ones keep their server. */
  retarget(port: number): void;
  /** Ends every open connection pair at once, as a dead primary or a pooler restart does. */
  cutAll(): void;
  /**
   * Every open connection pair stops forwarding, both ways, and both of its sockets stay open:
   * no FIN, no RST, nothing read from either side, nor a close passed on. What a client sees of
   * a host that vanished (a node lost, a partition): a statement already sent and one sent later
   * alike wait for an answer that never comes. New connections go where `retarget` points, as
   * before (the address switched to a promoted standby). They stay so until `close`.
   */
  blackhole(): void;
  /** While refusing, a new connection is closed as soon as it is accepted. */
  refuseNew(refusing: boolean): void;
  /**
   * Lets the next `count` new connections through and refuses every one after them, until
   * `refuseNew(false)`: a database lost right after a client's first connections.
   */
  refuseAfter(count: number): void;
  /**
   * Arms a lost reply: the next time a client sends a chunk for which `matches` is true, the
   * server's answer to it is swallowed up to and including its ReadyForQuery (so the statement's
   * implicit transaction has committed), and then both sides are closed (`then: 'close'`, the
   * default: a connection that broke) or the pair goes silent as a blackholed one does
   * (`then: 'silence'`: a host that vanished right after it committed; the client learns nothing
   * until its own statement bound). Resolves when it fired. `times` arms it for that many
   * matches in a row.
   */
  loseReplyTo(
    matches: (clientChunk: Buffer) => boolean,
    times?: number,
    then?: 'close' | 'silence',
  ): Promise<void>;
  /**
   * Holds what every open connection's server sends (and its close) until `release` is called,
   * which passes each pair's held bytes on in one write, then the close: several messages the
   * client then reads in one chunk, as a slow reader does. `serverClosed` tells when every held
   * connection's server has closed: what the server sent before its close is all held by then.
   */
  holdReplies(): { release(): void; serverClosed(): boolean };
  /** Connections accepted so far. */
  readonly accepted: number;
  close(): Promise<void>;
}

/** ReadyForQuery: the byte that starts the server's last message of a statement cycle. */
const READY_FOR_QUERY = 0x5a;

/** Follows the server's message framing (type byte, int32 length) to find a whole ReadyForQuery. */
class ServerFrames {
  private pending = Buffer.alloc(0);

  /** Feeds a chunk; true once a ReadyForQuery message has been received whole. */
  sawReadyForQuery(chunk: Buffer): boolean {
    this.pending = Buffer.concat([this.pending, chunk]);
    let offset = 0;
    while (this.pending.length - offset >= 5) {
      const type = this.pending[offset];
      const length = this.pending.readInt32BE(offset + 1);
      if (this.pending.length - offset < 1 + length) break;
      offset += 1 + length;
      if (type === READY_FOR_QUERY) return true;
    }
    this.pending = this.pending.subarray(offset);
    return false;
  }
}

interface Pair {
  client: Socket;
  server: Socket;
  /** Blackholed: nothing is forwarded and neither side's close reaches the other. */
  dark: boolean;
  /** While replies are held (holdReplies): the server's bytes, and whether it closed. */
  held?: { chunks: Buffer[]; closed: boolean };
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  let target = targetPort;
  let refusing = false;
  /** New connections past this count of accepted ones are refused (refuseAfter). */
  let refuseBeyond = Infinity;
  let accepted = 0;
  const pairs = new Set<Pair>();
  const armed: {
    matches: (chunk: Buffer) => boolean;
    fired: () => void;
    then: 'close' | 'silence';
  }[] = [];

  const endPair = (pair: Pair): void => {
    pairs.delete(pair);
    pair.client.destroy();
    pair.server.destroy();
  };
  const darken = (pair: Pair): void => {
    pair.dark = true;
    // Not read at all: what either side sends waits in its socket buffers, unanswered.
    pair.client.pause();
    pair.server.pause();
  };

  // Half-open allowed, so that a client's FIN is not answered by one of ours on its own: a
  // blackholed pair must not let the client's graceful close complete.
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
    accepted += 1;
    if (refusing || accepted > refuseBeyond) {
      client.destroy();
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: target });
    const pair: Pair = { client, server: upstream, dark: false };
    pairs.add(pair);
    let losing: { frames: ServerFrames; fired: () => void; then: 'close' | 'silence' } | undefined;
    client.on('data', (chunk: Buffer) => {
      if (pair.dark) return;
      const rule = armed[0];
      if (rule && !losing && rule.matches(chunk)) {
        armed.shift();
        losing = { frames: new ServerFrames(), fired: rule.fired, then: rule.then };
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (pair.dark) return;
      if (pair.held) {
        pair.held.chunks.push(chunk);
        return;
      }
      if (!losing) {
        client.write(chunk);
        return;
      }
      if (losing.frames.sawReadyForQuery(chunk)) {
        const { fired, then } = losing;
        if (then === 'silence') darken(pair);
        else endPair(pair);
        fired();
      }
    });
    // A blackholed pair is left as it is (close() ends it): a vanished host passes nothing on.
    const end = (): void => {
      if (!pair.dark) endPair(pair);
    };
    client.on('error', end).on('end', end).on('close', end);
    const serverEnd = (): void => {
      if (pair.held) pair.held.closed = true;
      else end();
    };
    upstream.on('error', serverEnd).on('close', serverEnd);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the proxy has no TCP port');

  return {
    port: address.port,
    get accepted() {
      return accepted;
    },
    retarget(port) {
      target = port;
    },
    cutAll() {
      for (const pair of [...pairs]) endPair(pair);
    },
    blackhole() {
      for (const pair of pairs) darken(pair);
    },
    refuseNew(value) {
      refusing = value;
      if (!value) refuseBeyond = Infinity;
    },
    refuseAfter(count) {
      refuseBeyond = accepted + count;
    },
    loseReplyTo(matches, times = 1, then = 'close') {
      const all: Promise<void>[] = [];
      for (let i = 0; i < times; i += 1) {
        all.push(new Promise<void>((fired) => armed.push({ matches, fired, then })));
      }
      return Promise.all(all).then(() => undefined);
    },
    holdReplies() {
      const holding = [...pairs];
      for (const pair of holding) pair.held = { chunks: [], closed: false };
      const serverClosed = () => holding.every((pair) => pair.held?.closed !== false);
      const release = () => {
        for (const pair of [...pairs]) {
          const held = pair.held;
          pair.held = undefined;
          if (!held) continue;
          const bytes = Buffer.concat(held.chunks);
          if (!held.closed) {
            if (bytes.length > 0) pair.client.write(bytes);
            continue;
          }
          // The bytes, then the close, as the server sent them.
          pairs.delete(pair);
          pair.client.end(bytes);
        }
      };
      return { release, serverClosed };
    },
    async close() {
      for (const pair of [...pairs]) endPair(pair);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
