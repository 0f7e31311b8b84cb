// The UDP listener: bytes in, handler, bytes out. Never lets a bad packet or a failing send
// take the process down.
import { Buffer } from 'node:buffer';
import { createSocket, type Socket } from 'node:dgram';
import type { LookupOneOptions } from 'node:dns';
import { isIP } from 'node:net';
import type { Logger } from '@kube-dns/config';
import type { DnsHandler } from './handler.js';

export class UdpListener {
  private socket: Socket | undefined;
  private inflight = 0;
  private closing = false;
  private drained: (() => void) | undefined;
  /**
   * The last sender's address object, held for its hidden class, as server/wire.ts holds the
   * last query: with none alive, a full collection would free the class and throw away the
   * optimized code of node's datagram handler and ours.
   */
  private lastRinfo: unknown;

  /**
   * Node's send() passes its address through the socket's lookup before every datagram. The
   * default, dns.lookup, tests an IP literal with a regular expression and hands it back on the
   * next tick, so every reply cost a tick object and a deferred send (about 0.7 µs of a 6 µs
   * query, measured). Every address this socket sees is a literal (the bind address is checked
   * as one by options.ts; a reply goes where its query came from), so it is handed straight back
   * and the datagram leaves inside send().
   */
  private readonly lookup = (address: string, family: LookupOneOptions | number, callback: (err: null, address: string, family: number) => void): void => {
    callback(null, address, typeof family === 'number' ? family : isIP(address));
  };

  constructor(
    private readonly handler: Pick<DnsHandler, 'handle'>,
    private readonly log: Logger,
  ) {}

  /** `ipv6Only`: an IPv6 wildcard beside an IPv4 socket on the same port (app.ts). */
  listen(host: string, port: number, ipv6Only = false): Promise<number> {
    const sock = createSocket({ type: isIP(host) === 6 ? 'udp6' : 'udp4', reuseAddr: false, ipv6Only, lookup: this.lookup });
    this.socket = sock;
    sock.on('message', (msg, rinfo) => {
      this.lastRinfo = rinfo;
      this.onMessage(msg, rinfo.address, rinfo.port);
    });
    return new Promise((resolve, reject) => {
      // a failed bind is the caller's to report (an address not bindable yet is retried quietly)
      sock.once('error', reject);
      sock.bind(port, host, () => {
        sock.off('error', reject);
        sock.on('error', (e) => this.log.error({ err: e.message }, 'UDP socket error'));
        try {
          sock.setRecvBufferSize(4 * 1024 * 1024); // absorb bursts (ndots:5 fans one lookup out to many)
        } catch {
          /* not permitted: keep the default */
        }
        resolve(sock.address().port);
      });
    });
  }

  private onMessage(msg: Buffer, address: string, port: number): void {
    if (this.closing) return;
    const r = this.handler.handle(msg, 'udp', address, port);
    if (r === undefined) return;
    if (Buffer.isBuffer(r)) {
      // the hot path: no promise and no callback. Without a callback Node sends synchronously
      // when the socket can take the datagram (uv_udp_try_send) and schedules nothing; with one
      // it queues a tick per reply just to report success. A failed send of a UDP reply is the
      // same, to the client, as a reply lost on the way: it retries.
      try {
        this.socket?.send(r, port, address);
      } catch {
        /* socket closed meanwhile */
      }
      return;
    }
    this.inflight++;
    r.then(
      (reply) => (reply ? this.send(reply, address, port) : undefined),
      () => undefined,
    ).finally(() => {
      if (--this.inflight === 0 && this.drained) this.drained();
    });
  }

  /** Resolves once the datagram left (closing the socket earlier would drop it). */
  private send(reply: Buffer, address: string, port: number): Promise<void> {
    const sock = this.socket;
    if (!sock) return Promise.resolve();
    return new Promise((resolve) => {
      try {
        sock.send(reply, port, address, (err) => {
          if (err) this.log.debug({ err: err.message }, 'UDP send failed');
          resolve();
        });
      } catch {
        resolve(); // socket closed meanwhile
      }
    });
  }

  /** Stops taking queries, waits (up to timeoutMs) for those in flight, closes the socket. */
  async close(timeoutMs = 4000): Promise<void> {
    this.closing = true;
    if (this.inflight > 0) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        setTimeout(resolve, timeoutMs).unref();
      });
    }
    const sock = this.socket;
    this.socket = undefined;
    if (sock) await new Promise<void>((r) => sock.close(() => r()));
  }
}
