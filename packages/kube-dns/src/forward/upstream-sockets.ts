// UDP exchanges with upstream servers over a few long-lived sockets per server, instead of a
// socket per query.
//
// A socket per query costs socket(), bind(), connect() and close() every time: under a flood
// of names to forward, the thousand forwards that fill --max-concurrent-forwards are created
// in one burst and time out in another, and those bursts were most of what the well-behaved
// clients still waited for (docs/reliability.md). dnsmasq keeps 64 sockets on random ports for
// the same reason. What a socket per query gave is kept, but for 4 bits:
//   - spoofing resistance: every socket is bound to its own random port and replaced after
//     `usesPerSocket` queries, so the ports keep changing; every query gets a random ID not in
//     use on its socket; a reply must carry the question asked (an off-path spoofer must guess
//     port, ID and name). A forged reply now hits any of a server's 16 open ports rather than
//     the one its query used: 4 bits of the ~31 a fresh port and an ID gave;
//   - replies only from the server asked: each socket is connected to its server (the kernel
//     drops datagrams from any other address);
//   - a refused server fails at once: a connected socket hears the ICMP port unreachable
//     (ECONNREFUSED), which fails every exchange waiting on that socket and retires it.
// A socket nobody used for `idleMs` is retired: the servers asked change (a ConfigMap edit, a
// stub server's name resolving elsewhere, a cluster-named stub's new ClusterIP), and without it
// each server ever asked kept its 16 sockets, file descriptors and all, for the process's life.
import { Buffer } from 'node:buffer';
import { randomInt } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { DnsTimeoutError, type Server } from '@kube-dns/dns-client';
import { questionEnd, sameQuestion } from './reply-check.js';

interface Pending {
  resolve: (reply: Buffer) => void;
  reject: (e: Error) => void;
  timer: NodeJS.Timeout;
  /** The question section as sent (bytes 12 to the end of the first question). */
  question: Buffer;
}

interface Slot {
  sock: Socket;
  server: Server;
  /** The local port, once connected (sentFrom). */
  port?: number;
  pending: Map<number, Pending>;
  uses: number;
  /** Out of the pool: closed as soon as nothing waits on it. */
  retired: boolean;
  /** performance.now() of the last exchange it carried (idle sweep). */
  lastUsed: number;
  /** Sends waiting for connect() to finish (a socket still connecting cannot send); undefined once connected. */
  queue: (() => void)[] | undefined;
}

export interface UpstreamSocketsOptions {
  /** Sockets per server at most. Default 16. */
  perServer?: number;
  /** Queries a socket carries before it is replaced by one on a new random port. Default 100. */
  usesPerSocket?: number;
  /** A socket unused this long (ms) is closed; looked for every half of it. Default 60 s. */
  idleMs?: number;
}

const fmt = (s: Server) => (isIP(s.host) === 6 ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`);

/** Bytes 12 up to the end of the first question, or undefined when the message has none. */
function questionOf(msg: Buffer): Buffer | undefined {
  const end = questionEnd(msg);
  return end < 0 ? undefined : msg.subarray(12, end);
}

export class UpstreamSockets {
  private readonly byServer = new Map<string, Slot[]>();
  /** Every socket not closed yet, retired ones still waiting for replies included (close()). */
  private readonly live = new Set<Slot>();
  /** Connected sockets by local port (sentFrom). */
  private readonly byPort = new Map<number, Slot>();
  private readonly perServer: number;
  private readonly usesPerSocket: number;
  private readonly idleMs: number;
  /** The idle sweep's timer, while any socket is in the pool. */
  private sweeper: NodeJS.Timeout | undefined;
  /** Sockets opened so far (tests, metrics). */
  opened = 0;

  constructor(o: UpstreamSocketsOptions = {}) {
    this.perServer = o.perServer ?? 16;
    this.usesPerSocket = o.usesPerSocket ?? 100;
    this.idleMs = o.idleMs ?? 60_000;
  }

  /** Sockets open: in the pool, or retired and still waiting for a reply. */
  get openSockets(): number {
    return this.live.size;
  }

  /** Sends `message` (its ID replaced) and resolves with the reply, as dns-client's exchange does over UDP. */
  exchange(server: Server, message: Buffer, timeoutMs: number): Promise<Buffer> {
    const question = questionOf(message);
    if (!question) return Promise.reject(new Error('not a query with a question'));
    const slot = this.slotFor(server);
    slot.uses++;
    slot.lastUsed = performance.now();
    let id = randomInt(0, 65536);
    while (slot.pending.has(id)) id = randomInt(0, 65536);
    const out = Buffer.from(message);
    out.writeUInt16BE(id, 0);
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        slot.pending.delete(id);
        this.release(slot);
        reject(new DnsTimeoutError(server, 'udp', timeoutMs));
      }, timeoutMs);
      slot.pending.set(id, { resolve, reject, timer, question });
      const fail = (err: Error) => {
        const p = slot.pending.get(id);
        if (!p) return;
        slot.pending.delete(id);
        clearTimeout(p.timer);
        this.release(slot);
        reject(err);
      };
      const send = () => {
        if (!slot.pending.has(id)) return; // failed or timed out while the socket was connecting
        try {
          slot.sock.send(out, (err) => err && fail(err));
        } catch (e) {
          fail(e as Error);
        }
      };
      if (slot.queue) slot.queue.push(send);
      else send();
      // replaced after its share of queries: the next one gets a new random port
      if (slot.uses >= this.usesPerSocket) this.retire(server, slot);
    });
  }

  /**
   * The server ("ip:port") that a query we sent is waiting on, when `message`, received by our own
   * listener from local port `port`, is that very query: the server sent it straight back to us
   * (a forwarding loop). Port, ID and question must all match, so a client's query never does.
   */
  sentFrom(port: number, message: Buffer): string | undefined {
    const slot = this.byPort.get(port);
    if (!slot || message.length < 12) return undefined;
    const p = slot.pending.get(message.readUInt16BE(0));
    return p && sameQuestion(message, p.question) ? fmt(slot.server) : undefined;
  }

  /** Closes every socket; exchanges still waiting fail. */
  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    for (const s of [...this.live]) this.fail(s, new Error('forwarding stopped'));
    this.byServer.clear();
  }

  /** Retires the sockets unused for idleMs (closed at once: an idle one has nothing pending). */
  private sweep(): void {
    const before = performance.now() - this.idleMs;
    for (const slots of this.byServer.values()) for (const slot of [...slots]) if (slot.lastUsed <= before) this.retire(slot.server, slot);
    if (this.byServer.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  private key(s: Server): string {
    return fmt(s);
  }

  private slotFor(server: Server): Slot {
    const key = this.key(server);
    let slots = this.byServer.get(key);
    if (!slots) this.byServer.set(key, (slots = []));
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), this.idleMs / 2);
      this.sweeper.unref();
    }
    if (slots.length < this.perServer) {
      const slot = this.open(server);
      slots.push(slot);
      return slot;
    }
    return slots[randomInt(0, slots.length)]!;
  }

  private open(server: Server): Slot {
    // bound by connect() to a port the kernel picks at random (Linux randomizes ephemeral ports)
    const sock = createSocket(isIP(server.host) === 6 ? 'udp6' : 'udp4');
    const slot: Slot = { sock, server, pending: new Map(), uses: 0, retired: false, lastUsed: performance.now(), queue: [] };
    this.opened++;
    this.live.add(slot);
    sock.on('message', (msg) => {
      if (msg.length < 12) return;
      const id = msg.readUInt16BE(0);
      const p = slot.pending.get(id);
      if (!p || !sameQuestion(msg, p.question)) return;
      slot.pending.delete(id);
      clearTimeout(p.timer);
      p.resolve(msg);
      this.release(slot);
    });
    sock.on('error', (e) => {
      // Node says "recvmsg ECONNREFUSED" without the peer; say which server refused
      if (!e.message.includes(fmt(server))) e.message = `${e.message} ${fmt(server)}`;
      this.retire(server, slot);
      this.fail(slot, e);
    });
    sock.connect(server.port, server.host, (err?: Error) => {
      if (err) {
        // ENETUNREACH for an IPv6 upstream on a node without IPv6 routes, say: the waiting sends
        // would go out unconnected and fail with a message about a port. The reason instead, and
        // a new socket for the next query
        if (!err.message.includes(fmt(server))) err.message = `${err.message} ${fmt(server)}`;
        this.retire(server, slot);
        this.fail(slot, err);
        return;
      }
      try {
        slot.port = sock.address().port;
        this.byPort.set(slot.port, slot);
      } catch {
        /* closed meanwhile */
      }
      const queued = slot.queue ?? [];
      slot.queue = undefined;
      for (const send of queued) send();
    });
    // an idle pool must not keep the process alive: the exchanges' timers do while they wait
    sock.unref();
    return slot;
  }

  /** Takes the slot out of the pool; it closes once nothing waits on it. */
  private retire(server: Server, slot: Slot): void {
    if (slot.retired) return;
    slot.retired = true;
    const slots = this.byServer.get(this.key(server));
    const i = slots?.indexOf(slot) ?? -1;
    if (i >= 0) slots!.splice(i, 1);
    if (slots?.length === 0) this.byServer.delete(this.key(server));
    this.release(slot);
  }

  private release(slot: Slot): void {
    if (slot.retired && slot.pending.size === 0 && this.live.delete(slot)) {
      if (slot.port !== undefined && this.byPort.get(slot.port) === slot) this.byPort.delete(slot.port);
      try {
        slot.sock.close();
      } catch {
        /* already closed */
      }
    }
  }

  private fail(slot: Slot, e: Error): void {
    const waiting = [...slot.pending.values()];
    slot.pending.clear();
    slot.retired = true;
    for (const p of waiting) {
      clearTimeout(p.timer);
      p.reject(e);
    }
    this.release(slot);
  }
}
