// A scriptable DNS server on real UDP and TCP sockets, for tests that need an upstream,
// a stub-domain server or a probe target.
import { Buffer } from 'node:buffer';
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server as TcpServer } from 'node:net';
import * as dnsPacket from 'dns-packet';
import { bindUdpAndTcp } from './bind-pair.js';

export interface TestQuestion {
  name: string;
  type: string;
  class: string;
  transport: 'udp' | 'tcp';
}

export type TestAnswer =
  | { rcode?: 'NOERROR' | 'NXDOMAIN' | 'SERVFAIL' | 'REFUSED'; answers?: dnsPacket.Answer[]; authorities?: dnsPacket.Answer[]; aa?: boolean; tc?: boolean }
  | 'drop';

export interface TestDnsServer {
  host: string;
  port: number;
  /** Every question received, in order. */
  questions: TestQuestion[];
  close(): Promise<void>;
}

const RCODES = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

/**
 * Answers each question with `handler(question)`. The default handler answers any A question
 * with `answerIp` (TTL 60) and NXDOMAIN otherwise.
 */
export async function startTestDnsServer(opts: {
  host?: string;
  port?: number;
  handler?: (q: TestQuestion) => TestAnswer | Promise<TestAnswer>;
  answerIp?: string;
}): Promise<TestDnsServer> {
  const host = opts.host ?? '127.0.0.1';
  const questions: TestQuestion[] = [];
  const handler =
    opts.handler ??
    ((q: TestQuestion): TestAnswer =>
      q.type === 'A' && opts.answerIp
        ? { answers: [{ name: q.name, type: 'A', ttl: 60, data: opts.answerIp }] }
        : { rcode: 'NXDOMAIN' });

  async function respond(msg: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer | undefined> {
    let req: dnsPacket.DecodedPacket;
    try {
      req = dnsPacket.decode(msg);
    } catch {
      return undefined;
    }
    const q0 = req.questions?.[0];
    if (!q0) return undefined;
    const q: TestQuestion = { name: q0.name, type: q0.type, class: q0.class ?? 'IN', transport };
    questions.push(q);
    const a = await handler(q);
    if (a === 'drop') return undefined;
    const rcode = RCODES[a.rcode ?? 'NOERROR'];
    return dnsPacket.encode({
      type: 'response',
      id: req.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (a.aa ? dnsPacket.AUTHORITATIVE_ANSWER : 0) | (a.tc ? dnsPacket.TRUNCATED_RESPONSE : 0) | rcode,
      questions: req.questions,
      answers: a.answers ?? [],
      authorities: a.authorities ?? [],
    });
  }

  const tcp: TcpServer = createServer((conn) => {
    let buf = Buffer.alloc(0);
    conn.on('error', () => conn.destroy());
    // a handler that throws ends the connection instead of leaving an unhandled rejection
    const onData = async (chunk: Buffer): Promise<void> => {
      buf = Buffer.concat([buf, chunk]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        const msg = buf.subarray(2, 2 + buf.readUInt16BE(0));
        buf = buf.subarray(2 + msg.length);
        const reply = await respond(Buffer.from(msg), 'tcp');
        if (reply && !conn.destroyed) {
          const len = Buffer.alloc(2);
          len.writeUInt16BE(reply.length);
          conn.write(Buffer.concat([len, reply]));
        }
      }
    };
    conn.on('data', (chunk) => void onData(chunk).catch(() => conn.destroy()));
  });
  const sockets = new Set<import('node:net').Socket>();
  tcp.on('connection', (c) => {
    sockets.add(c);
    c.on('close', () => sockets.delete(c));
  });
  const makeUdp = (): Socket => {
    const sock = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    // a handler that throws sends no reply (what a broken server does) instead of an unhandled rejection
    sock.on('message', (msg, rinfo) =>
      void respond(msg, 'udp').then(
        (reply) => {
          try {
            if (reply) sock.send(reply, rinfo.port, rinfo.address);
          } catch {
            // closed while a slow handler was answering: the reply goes nowhere, as from a stopped server
          }
        },
        () => undefined,
      ),
    );
    return sock;
  };
  const { udp, port } = await bindUdpAndTcp(host, opts.port, makeUdp, tcp);

  let closed = false;
  return {
    host,
    port,
    questions,
    close: async () => {
      if (closed) return; // idempotent: tests close early and again in t.after
      closed = true;
      for (const s of sockets) s.destroy();
      await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
    },
  };
}
