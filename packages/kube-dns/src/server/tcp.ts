// The TCP listener (RFC 7766): length-prefixed messages, several per connection (pipelining,
// answered as they complete), with every resource a client can hold bounded:
//   - replies waiting to be sent: above maxBufferedBytes the connection stops being read until
//     the client has taken them (a client that pipelines and never reads gets no more answers,
//     not our memory). Forwards already in flight still complete after the pause: 32 forwarded
//     64 KiB answers could make 2 MB a connection. A slow reader on a slow link is owed them,
//     but not a thousand clients that never read: a reply to a connection over its limit is
//     written only while all connections together hold less than maxTotalUnsentBytes; past
//     that the connection is closed instead (RFC 7766 6.2.3 lets a server close). A zone
//     transfer, written whole, is exempt until it drains;
//   - queries in flight per connection (forwards waiting upstream): above maxPipelined, reading
//     pauses the same way;
//   - connections: at maxConnections the connection idle the longest (nothing in flight, nothing
//     unsent) is closed to admit the new one, as BIND does with tcp-clients;
//   - time: a connection silent for idleTimeoutMs with no reply to come is closed, and so is one
//     whose message has been arriving for longer than that (a partial length prefix or half a
//     message, trickled).
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '@kube-dns/config';
import type { DnsHandler } from './handler.js';
import { isFramed, isTransferUnderway } from '../transfer/messages.js';

export interface TcpOptions {
  idleTimeoutMs?: number;
  maxConnections?: number;
  /** Queries in flight per connection before reading pauses. */
  maxPipelined?: number;
  /** Unsent reply bytes per connection before reading pauses. */
  maxBufferedBytes?: number;
  /** Unsent reply bytes over all connections past which one over its own limit is closed. */
  maxTotalUnsentBytes?: number;
}

const EMPTY = Buffer.alloc(0);

/** One connection's reassembly and flow state. */
class Conn {
  buf: Buffer = EMPTY;
  pending = 0;
  /** Reading paused for backpressure (unsent replies or queries in flight). */
  blocked = false;
  /** When the message now being reassembled began to arrive (0: none). */
  partialSince = 0;
  /** The client has sent all it will (FIN): the connection ends once its replies are written. */
  ended = false;
  /** A zone transfer is in the unsent bytes (until 'drain'): the overflow rule does not apply. */
  bulk = false;
  constructor(readonly socket: Socket) {}
}

export interface TcpStats {
  connections: number;
  /** Reply bytes written but not yet taken by clients, over all connections. */
  bufferedBytes: number;
  /** Connections closed to admit a new one at the cap. */
  evicted: number;
  /** Connections closed for a message that took longer than the idle timeout to arrive. */
  slowMessages: number;
  /** Connections refused at the cap because none was idle. */
  refused: number;
  /** Connections closed because replies piled up for clients that do not read (maxTotalUnsentBytes). */
  overflowed: number;
}

export class TcpListener {
  /** One per address listened on (0.0.0.0 and [::]): their connections share every bound. */
  private readonly servers: Server[] = [];
  /** Ordered by last activity, oldest first (a Map keeps insertion order; activity re-inserts). */
  private readonly conns = new Map<Socket, Conn>();
  private inflight = 0;
  private drained: (() => void) | undefined;
  private closing = false;
  private readonly idleMs: number;
  private readonly maxConns: number;
  private readonly maxPipelined: number;
  private readonly maxBuffered: number;
  private readonly maxTotalUnsent: number;
  private evicted = 0;
  private slowMessages = 0;
  private refused = 0;
  private overflowed = 0;

  constructor(
    private readonly handler: Pick<DnsHandler, 'handle'>,
    private readonly log: Logger,
    opts: TcpOptions = {},
  ) {
    this.idleMs = opts.idleTimeoutMs ?? 10_000;
    this.maxConns = opts.maxConnections ?? 1000;
    this.maxPipelined = opts.maxPipelined ?? 32;
    this.maxBuffered = opts.maxBufferedBytes ?? 64 * 1024;
    this.maxTotalUnsent = opts.maxTotalUnsentBytes ?? 16 * 1024 * 1024;
  }

  /**
   * Listens on `host` too (a listener may listen on several addresses: 0.0.0.0 and, with
   * `ipv6Only`, [::] beside it on the same port, app.ts).
   */
  listen(host: string, port: number, ipv6Only = false): Promise<number> {
    // half-open allowed: a client may send its queries and shut its side (FIN) before the
    // replies come (RFC 7766 6.2.4: the server answers what it received, then closes); node's
    // default ends our side at the client's FIN and drops a reply still being made upstream
    const server = createServer({ allowHalfOpen: true }, (c) => this.onConnection(c));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      // The accept queue holds a burst while libuv accepts one connection per loop turn. When it
      // is full the kernel drops SYNs, and a client waits a 1 s retransmit (then 3 s): a queue of
      // 4,096 (somaxconn's default, which caps it; Go's listeners ask for somaxconn too) absorbs a
      // 5,000-connection burst at the cost of ~40 µs per queued connection for whoever is behind.
      server.listen({ host, port, exclusive: true, backlog: 4096, ipv6Only }, () => {
        server.off('error', reject);
        server.on('error', (e) => this.log.error({ err: e.message }, 'TCP server error'));
        this.servers.push(server);
        resolve((server.address() as { port: number }).port);
      });
    });
  }

  stats(): TcpStats {
    return {
      connections: this.conns.size,
      bufferedBytes: this.totalUnsent(),
      evicted: this.evicted,
      slowMessages: this.slowMessages,
      refused: this.refused,
      overflowed: this.overflowed,
    };
  }

  private onConnection(c: Socket): void {
    if (this.closing) {
      c.destroy();
      return;
    }
    if (this.conns.size >= this.maxConns && !this.evictIdle()) {
      this.refused++;
      c.destroy();
      return;
    }
    const st = new Conn(c);
    this.conns.set(c, st);
    c.setNoDelay(true);
    // silent with a reply still to come is not idle (a zone transfer being built, a slow upstream):
    // the timer is set again, since a timeout that fired is not re-armed by the reply's write
    c.setTimeout(this.idleMs);
    c.on('timeout', () => (st.pending === 0 ? c.destroy() : c.setTimeout(this.idleMs)));
    c.on('error', () => c.destroy());
    c.on('close', () => this.conns.delete(c));
    c.on('drain', () => {
      st.bulk = false;
      this.maybeResume(st);
    });
    c.on('data', (chunk: Buffer) => this.onData(st, chunk));
    c.on('end', () => {
      st.ended = true;
      this.endIfAnswered(st);
    });
  }

  /**
   * Ends our side of a connection the client has ended, once every query it sent is answered:
   * none in flight, none left buffered behind backpressure. end() sends what is written first.
   */
  private endIfAnswered(st: Conn): void {
    if (st.ended && st.pending === 0 && !st.blocked) st.socket.end();
  }

  /** Closes the connection idle the longest; false when every one has work in progress. */
  private evictIdle(): boolean {
    for (const [sock, st] of this.conns) {
      if (st.pending === 0 && sock.writableLength === 0) {
        this.conns.delete(sock);
        sock.destroy();
        this.evicted++;
        return true;
      }
    }
    return false;
  }

  private onData(st: Conn, chunk: Buffer): void {
    st.buf = st.buf.length ? Buffer.concat([st.buf, chunk]) : chunk;
    const now = performance.now();
    if (st.partialSince === 0) st.partialSince = now;
    else if (!st.blocked && now - st.partialSince > this.idleMs) {
      // a message trickled in slower than the idle timeout allows (slowloris)
      this.slowMessages++;
      st.socket.destroy();
      return;
    }
    this.process(st);
  }

  /** Answers every complete message buffered, until backpressure says stop. */
  private process(st: Conn): void {
    const c = st.socket;
    let answered = false;
    while (!st.blocked && st.buf.length >= 2) {
      const len = st.buf.readUInt16BE(0);
      if (st.buf.length < 2 + len) break;
      // the chunk Buffers are the socket's own (never reused), so a view is safe to hand on
      const msg = st.buf.subarray(2, 2 + len);
      st.buf = st.buf.length === 2 + len ? EMPTY : st.buf.subarray(2 + len);
      answered = true;
      if (len === 0) continue;
      const r = this.handler.handle(msg, 'tcp', c.remoteAddress, c.remotePort);
      if (r === undefined) continue;
      if (Buffer.isBuffer(r)) this.write(st, r);
      else this.await(st, r);
      // a zone transfer still being built: nothing more is read until it is written and drained,
      // as with one already built, or 32 pipelined ones would each add a copy of the zone
      if (!st.blocked && !Buffer.isBuffer(r) && isTransferUnderway(r)) {
        st.blocked = true;
        c.pause();
      }
      if (st.pending >= this.maxPipelined && !st.blocked) {
        st.blocked = true;
        c.pause();
      }
    }
    if (answered) {
      // activity: this connection becomes the most recently used
      this.conns.delete(c);
      if (!c.destroyed) this.conns.set(c, st);
      st.partialSince = st.buf.length ? performance.now() : 0;
    }
    if (st.buf.length > 65537) c.destroy(); // cannot happen with a valid length prefix
  }

  private await(st: Conn, r: Promise<Buffer | undefined>): void {
    st.pending++;
    this.inflight++;
    r.then(
      (reply) => reply && this.write(st, reply),
      () => undefined,
    ).finally(() => {
      st.pending--;
      if (--this.inflight === 0 && this.drained) this.drained();
      if (this.closing && st.pending === 0) st.socket.end();
      else {
        this.maybeResume(st);
        this.endIfAnswered(st);
      }
    });
  }

  private maybeResume(st: Conn): void {
    const c = st.socket;
    if (!st.blocked || c.destroyed || st.pending >= this.maxPipelined || c.writableLength > this.maxBuffered) return;
    st.blocked = false;
    // the time spent paused was ours, not the client's: a message it sent in part while we did
    // not read is timed from now (else the slowloris rule would close a pipelining client)
    if (st.partialSince !== 0) st.partialSince = performance.now();
    this.process(st); // messages already buffered first
    if (!st.blocked && !this.closing) c.resume();
    this.endIfAnswered(st);
  }

  /** Writes a reply; above maxBuffered unsent bytes reading pauses (overflow rule: the header). */
  private write(st: Conn, reply: Buffer): void {
    const c = st.socket;
    if (c.destroyed || !c.writable) return;
    if (isFramed(reply)) {
      // a zone transfer comes as several messages, already framed (transfer/messages.ts)
      if (!c.write(reply)) st.bulk = true; // until 'drain'
    } else {
      if (!st.bulk && c.writableLength > this.maxBuffered && this.totalUnsent() > this.maxTotalUnsent) {
        this.overflowed++;
        c.destroy();
        return;
      }
      const out = Buffer.allocUnsafe(2 + reply.length);
      out.writeUInt16BE(reply.length, 0);
      reply.copy(out, 2);
      c.write(out);
    }
    if (c.writableLength > this.maxBuffered && !st.blocked) {
      st.blocked = true;
      c.pause();
    }
  }

  /** Unsent bytes over all connections: walked only for a reply to a connection over its limit. */
  private totalUnsent(): number {
    let n = 0;
    for (const c of this.conns.keys()) n += c.writableLength;
    return n;
  }

  /** Stops accepting, lets queries in flight finish (up to timeoutMs), then closes every connection. */
  async close(timeoutMs = 4000): Promise<void> {
    this.closing = true;
    const closed = Promise.all(this.servers.map((server) => new Promise<void>((r) => server.close(() => r()))));
    if (this.inflight > 0) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        setTimeout(resolve, timeoutMs).unref();
      });
    }
    for (const c of this.conns.keys()) c.end();
    setTimeout(() => this.conns.forEach((_, c) => c.destroy()), 200).unref();
    await closed;
  }
}
