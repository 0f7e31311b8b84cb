// Worker threads for http-cache-stream.test.ts, each on its own event loop so that what they
// measure is kube-dns's behaviour, not their own work:
// - 'dns': a steady stream of DNS queries to kube-dns (four in flight, each answer sends the next),
//   recording when each answer arrived, until told to stop;
// - 'http': fetches /cache, noting when the first byte and the last chunk arrived.
import { createSocket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import * as dnsPacket from 'dns-packet';

export type ClientInput =
  | { role: 'dns'; dnsPort: number; /** [name, expected A] pairs asked in turn. */ names: [string, string][] }
  | { role: 'http'; url: string };

export interface DnsResult {
  /** Arrival times of the answers, in ms since the epoch (comparable across threads). */
  answeredAt: number[];
  wrong: string[];
  unanswered: number;
}

export interface HttpResult {
  status: number;
  /** The body's bytes, transferred (not copied) so that receiving them costs kube-dns's thread nothing. */
  body: ArrayBuffer;
  startedAt: number;
  /** When the last chunk of the body arrived (before any decoding of the whole). */
  endedAt: number;
}

const now = (): number => performance.timeOrigin + performance.now();
const input = workerData as ClientInput;

if (input.role === 'dns') {
  const sock = createSocket('udp4');
  const pending = new Map<number, { name: string; want: string; timer: NodeJS.Timeout }>();
  const answeredAt: number[] = [];
  const wrong: string[] = [];
  let unanswered = 0;
  let next = 0;
  let nextId = 1;
  let running = true;
  const send = (): void => {
    if (!running) return;
    const [name, want] = input.names[next++ % input.names.length]!;
    const id = nextId++ & 0xffff;
    const timer = setTimeout(() => {
      // No answer within 2 s: counted, and the stream goes on with a new query.
      pending.delete(id);
      unanswered++;
      send();
    }, 2000);
    pending.set(id, { name, want, timer });
    sock.send(dnsPacket.encode({ type: 'query', id, questions: [{ name, type: 'A', class: 'IN' }] }), input.dnsPort, '127.0.0.1');
  };
  sock.on('message', (buf) => {
    const at = now();
    let reply: dnsPacket.Packet;
    try {
      reply = dnsPacket.decode(buf);
    } catch {
      wrong.push('undecodable reply');
      return;
    }
    const p = pending.get(reply.id ?? -1);
    if (!p) return;
    pending.delete(reply.id!);
    clearTimeout(p.timer);
    answeredAt.push(at);
    const got = (reply.answers ?? []).map((a) => (a as { data: unknown }).data).join();
    if (got !== p.want) wrong.push(`${p.name}: ${got || (reply as { rcode?: string }).rcode} instead of ${p.want}`);
    send();
  });
  parentPort!.once('message', () => {
    running = false;
    for (const p of pending.values()) clearTimeout(p.timer);
    sock.close();
    const result: DnsResult = { answeredAt, wrong: wrong.slice(0, 5), unanswered };
    parentPort!.postMessage(result);
  });
  sock.bind(0, '127.0.0.1', () => {
    for (let i = 0; i < 4; i++) send();
    parentPort!.postMessage('started');
  });
} else {
  const startedAt = now();
  const res = await fetch(input.url);
  const chunks: Uint8Array[] = [];
  for await (const chunk of res.body!) chunks.push(chunk as Uint8Array);
  const endedAt = now();
  const body = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.length;
  }
  const result: HttpResult = { status: res.status, body: body.buffer, startedAt, endedAt };
  parentPort!.postMessage(result, [body.buffer]);
}
