// The TCP listener (RFC 7766): length-prefixed messages, several per connection (pipelining,
// answered as they complete), an idle timeout, a cap on connections.
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '@kube-dns/config';
import type { DnsHandler } from './handler.js';

export interface TcpOptions {
  idleTimeoutMs?: number;
  maxConnections?: number;
}

export class TcpListener {
  private server: Server | undefined;
  private readonly conns = new Set<Socket>();
  private inflight = 0;
  private drained: (() => void) | undefined;
  private closing = false;

  constructor(
    private readonly handler: Pick<DnsHandler, 'handle'>,
    private readonly log: Logger,
    private readonly opts: TcpOptions = {},
  ) {}

  listen(host: string, port: number): Promise<number> {
    const server = createServer((c) => this.onConnection(c));
    server.maxConnections = this.opts.maxConnections ?? 1000;
    this.server = server;
    server.on('error', (e) => this.log.error({ err: e.message }, 'TCP server error'));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host, port, exclusive: true }, () => {
        server.off('error', reject);
        resolve((server.address() as { port: number }).port);
      });
    });
  }

  private onConnection(c: Socket): void {
    if (this.closing) {
      c.destroy();
      return;
    }
    this.conns.add(c);
    c.setNoDelay(true);
    c.setTimeout(this.opts.idleTimeoutMs ?? 10_000, () => c.destroy());
    let buf = Buffer.alloc(0);
    let pending = 0;
    c.on('error', () => c.destroy());
    c.on('close', () => this.conns.delete(c));
    c.on('data', (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      while (buf.length >= 2) {
        const len = buf.readUInt16BE(0);
        if (buf.length < 2 + len) break;
        const msg = Buffer.from(buf.subarray(2, 2 + len));
        buf = buf.subarray(2 + len);
        if (len === 0) continue;
        const r = this.handler.handle(msg, 'tcp', c.remoteAddress, c.remotePort);
        if (r === undefined) continue;
        if (Buffer.isBuffer(r)) {
          this.write(c, r);
          continue;
        }
        pending++;
        this.inflight++;
        r.then(
          (reply) => reply && this.write(c, reply),
          () => undefined,
        ).finally(() => {
          pending--;
          if (--this.inflight === 0 && this.drained) this.drained();
          if (this.closing && pending === 0) c.end();
        });
      }
      if (buf.length > 65537) c.destroy(); // cannot happen with a valid length prefix
    });
  }

  private write(c: Socket, reply: Buffer): void {
    if (c.destroyed || !c.writable) return;
    const len = Buffer.allocUnsafe(2);
    len.writeUInt16BE(reply.length);
    c.write(Buffer.concat([len, reply]));
  }

  /** Stops accepting, lets queries in flight finish (up to timeoutMs), then closes every connection. */
  async close(timeoutMs = 4000): Promise<void> {
    this.closing = true;
    const server = this.server;
    const closed = server ? new Promise<void>((r) => server.close(() => r())) : Promise.resolve();
    if (this.inflight > 0) {
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        setTimeout(resolve, timeoutMs).unref();
      });
    }
    for (const c of this.conns) c.end();
    setTimeout(() => this.conns.forEach((c) => c.destroy()), 200).unref();
    await closed;
  }
}
