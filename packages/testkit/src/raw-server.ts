// A misbehaving DNS server on real sockets: the test scripts exactly which bytes go back, and
// when, on UDP and on TCP (same port), to exercise what a well-behaved test server never does.
import { Buffer } from 'node:buffer';
import { bindUdpAndTcp } from './bind-pair.js';
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Socket as TcpSocket } from 'node:net';
import * as dnsPacket from 'dns-packet';

export interface RawServer {
  host: string;
  port: number;
  /** Every query received, raw, in order. */
  queries: Buffer[];
  close(): Promise<void>;
}

export interface RawServerOptions {
  udp?: (query: Buffer, reply: (bytes: Buffer) => void, from: RemoteInfo, sock: UdpSocket) => void;
  /** Gets each whole query (the length prefix removed) and the connection to write raw bytes to. */
  tcp?: (query: Buffer, conn: TcpSocket) => void;
}

export async function startRawServer(opts: RawServerOptions): Promise<RawServer> {
  const host = '127.0.0.1';
  const queries: Buffer[] = [];
  const makeUdp = () => {
    const udp = createSocket('udp4');
    udp.on('message', (msg, rinfo) => {
      queries.push(msg);
      opts.udp?.(msg, (bytes) => udp.send(bytes, rinfo.port, rinfo.address), rinfo, udp);
    });
    return udp;
  };
  const conns = new Set<TcpSocket>();
  const tcp = createServer((conn) => {
    conns.add(conn);
    conn.on('close', () => conns.delete(conn));
    conn.on('error', () => conn.destroy());
    let buf = Buffer.alloc(0);
    conn.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = Buffer.from(buf.subarray(2, 2 + buf.readUInt16BE(0)));
        buf = buf.subarray(2 + msg.length);
        queries.push(msg);
        opts.tcp?.(msg, conn);
      }
    });
  });
  const { udp, port } = await bindUdpAndTcp(host, undefined, makeUdp, tcp);
  return {
    host,
    port,
    queries,
    close: async () => {
      for (const c of conns) c.destroy();
      await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
    },
  };
}

/** A response to `query` with the given answers, ID and flags overridable. */
export function response(query: Buffer, opts: { answers?: dnsPacket.Answer[]; id?: number; flags?: number } = {}): Buffer {
  const q = dnsPacket.decode(query);
  return dnsPacket.encode({
    type: 'response',
    id: opts.id ?? q.id,
    flags: opts.flags ?? dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: q.questions,
    answers: opts.answers ?? [],
  });
}

export const aRecord = (name: string, ip: string): dnsPacket.Answer => ({ name, type: 'A', ttl: 30, data: ip });

/** `bytes` with its 2-byte TCP length prefix. */
export function framed(bytes: Buffer): Buffer {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(bytes.length);
  return Buffer.concat([len, bytes]);
}
