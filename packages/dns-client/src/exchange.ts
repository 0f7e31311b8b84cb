// Sends one DNS message and returns the reply bytes, over UDP or TCP, with a timeout.
// One socket per exchange: a random source port per query (spoofing resistance) and no
// shared state to clean up when a server misbehaves.
import { Buffer } from 'node:buffer';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { isIP } from 'node:net';

export type Transport = 'udp' | 'tcp';

export interface Server {
  host: string;
  port: number;
}

export class DnsTimeoutError extends Error {
  override name = 'DnsTimeoutError';
  constructor(server: Server, transport: Transport, ms: number) {
    super(`no reply from ${fmt(server)} over ${transport} within ${ms} ms`);
  }
}

const fmt = (s: Server) => (isIP(s.host) === 6 ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`);

/**
 * Sends `message` (a complete DNS message) and resolves with the first reply whose ID matches.
 * UDP replies from another address or with another ID are ignored, as a resolver must.
 */
export function exchange(server: Server, message: Buffer, transport: Transport, timeoutMs: number): Promise<Buffer> {
  return transport === 'udp' ? exchangeUdp(server, message, timeoutMs) : exchangeTcp(server, message, timeoutMs);
}

function exchangeUdp(server: Server, message: Buffer, timeoutMs: number): Promise<Buffer> {
  if (isIP(server.host) === 0) return exchangeUdpByName(server, message, timeoutMs);
  return new Promise((resolve, reject) => {
    const family = isIP(server.host) === 6 ? 'udp6' : 'udp4';
    const sock = createSocket(family);
    const id = message.readUInt16BE(0);
    let done = false;
    const finish = (err: Error | null, reply?: Buffer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.close();
      if (err) reject(err);
      else resolve(reply!);
    };
    const timer = setTimeout(() => finish(new DnsTimeoutError(server, 'udp', timeoutMs)), timeoutMs);
    sock.on('error', (e) => {
      // Node says "recvmsg ECONNREFUSED" without the peer; say which server refused, as TCP's message does.
      if (!e.message.includes(fmt(server))) e.message = `${e.message} ${fmt(server)}`;
      finish(e);
    });
    sock.on('message', (msg, rinfo) => {
      if (msg.length < 12 || msg.readUInt16BE(0) !== id || rinfo.port !== server.port) return;
      finish(null, msg);
    });
    sock.connect(server.port, server.host, (err?: Error) => {
      if (err) return finish(err);
      try {
        sock.send(message, (e) => e && finish(e));
      } catch (e) {
        finish(e as Error);
      }
    });
  });
}

/** Lookups under way, by name: node cannot cancel one, so an exchange that timed out leaves it running. */
const lookups = new Map<string, Promise<string>>();

/**
 * A server given by name (a probe's target): the name is looked up first, within the same
 * timeout, so that the socket's family is the address's, and a name that does not resolve is
 * this exchange's error, never the process's (connect() reports a failed lookup to its callback
 * alone, and a send on the unconnected socket then throws). While the system's resolver hangs,
 * every exchange for that name shares the one lookup under way: a new one per probe would queue
 * behind it in libuv's four threads, one more every probe interval.
 */
async function exchangeUdpByName(server: Server, message: Buffer, timeoutMs: number): Promise<Buffer> {
  const started = Date.now();
  let looking = lookups.get(server.host);
  if (!looking) {
    // loaded on first use: node's resolver module is not worth its memory in processes that never look a name up
    looking = import('node:dns/promises')
      .then(({ lookup }) => lookup(server.host))
      .then(({ address }) => {
        // an empty name "resolves" to null: never an address to ask (nor a name to look up again)
        if (isIP(address ?? '') === 0) throw new Error('no address');
        return address;
      })
      .finally(() => lookups.delete(server.host));
    lookups.set(server.host, looking);
  }
  let timer: NodeJS.Timeout | undefined;
  const address = await Promise.race([
    looking,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new DnsTimeoutError(server, 'udp', timeoutMs)), timeoutMs))),
  ])
    .catch((e: Error) => {
      // a timeout here is the system resolver's, not the server's (never asked): say so
      if (e instanceof DnsTimeoutError) e.message = `cannot look up ${JSON.stringify(server.host)}: no answer within ${timeoutMs} ms`;
      else e = new Error(`cannot look up ${JSON.stringify(server.host)}: ${e.message}`);
      throw e;
    })
    .finally(() => clearTimeout(timer));
  return exchangeUdp({ host: address, port: server.port }, message, Math.max(1, timeoutMs - (Date.now() - started)));
}

function exchangeTcp(server: Server, message: Buffer, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = connect({ host: server.host, port: server.port });
    let buf = Buffer.alloc(0);
    let done = false;
    const finish = (err: Error | null, reply?: Buffer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      if (err) reject(err);
      else resolve(reply!);
    };
    const timer = setTimeout(() => finish(new DnsTimeoutError(server, 'tcp', timeoutMs)), timeoutMs);
    sock.on('error', (e) => finish(e));
    sock.on('connect', () => {
      const len = Buffer.alloc(2);
      len.writeUInt16BE(message.length);
      sock.write(Buffer.concat([len, message]));
    });
    sock.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2) {
        const n = buf.readUInt16BE(0);
        if (buf.length < 2 + n) return;
        const reply = buf.subarray(2, 2 + n);
        buf = buf.subarray(2 + n);
        if (reply.length >= 2 && reply.readUInt16BE(0) === message.readUInt16BE(0)) return finish(null, Buffer.from(reply));
      }
    });
    sock.on('end', () => finish(new Error(`${fmt(server)} closed the TCP connection without a reply`)));
  });
}
