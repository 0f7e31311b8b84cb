// A small stub resolver: build a question, exchange it, decode the reply.
import { Buffer } from 'node:buffer';
import * as dnsPacket from 'dns-packet';
import { type Server, type Transport, exchange } from './exchange.js';

export interface QueryOptions {
  name: string;
  type: dnsPacket.RecordType;
  class?: dnsPacket.RecordClass;
  transport?: Transport;
  timeoutMs?: number;
  /** Recursion desired (default true). */
  rd?: boolean;
  /** Add an OPT record advertising this UDP payload size. */
  ednsUdpSize?: number;
  /** With ednsUdpSize: set the DNSSEC OK bit. */
  dnssecOk?: boolean;
  /** Query ID (default random). */
  id?: number;
  /** On a truncated UDP reply, ask again over TCP (what stub resolvers do). Default false. */
  retryTcpOnTruncation?: boolean;
}

/** A decoded reply: dns-packet always sets `rcode` and `opcode` ('NOERROR', 'QUERY'...), its types omit them. */
export type DecodedReply = dnsPacket.DecodedPacket & { rcode: string; opcode: string };

export interface QueryResult {
  packet: DecodedReply;
  bytes: Buffer;
  transport: Transport;
  rttMs: number;
}

/**
 * A query ID from Math.random, not node:crypto: loading node's crypto costs a process about 2.2 MB
 * (measured with a bare node), and the nanny and the sidecar need it for nothing else. Their
 * queries are health probes. Where an off-path attacker's guess of the ID matters (queries kube-dns
 * sends upstream for clients) kube-dns sets the ID itself from node:crypto (forward/).
 */
const randomId = (): number => Math.floor(Math.random() * 65536);

/**
 * What makes `name` unsendable, if anything: an empty label (`a..b`, two trailing dots) or one over
 * 63 octets. dns-packet writes such a name without a word: a malformed question, which a server
 * answers FORMERR or not at all. The root (`` or `.`) and one trailing dot are fine.
 */
export function nameProblem(name: string): string | undefined {
  if (name === '' || name === '.') return undefined;
  const labels = (name.endsWith('.') ? name.slice(0, -1) : name).split('.');
  if (labels.some((l) => l === '')) return `${JSON.stringify(name)} has an empty label`;
  const long = labels.find((l) => Buffer.byteLength(l) > 63);
  if (long !== undefined) return `${JSON.stringify(name)} has a label of ${Buffer.byteLength(long)} octets (at most 63)`;
  if (Buffer.byteLength(name) > 254) return `${JSON.stringify(name)} is longer than 253 octets`;
  return undefined;
}

export function buildQuery(opts: QueryOptions): Buffer {
  const packet: dnsPacket.Packet = {
    type: 'query',
    id: opts.id ?? randomId(),
    flags: opts.rd === false ? 0 : dnsPacket.RECURSION_DESIRED,
    questions: [{ name: opts.name, type: opts.type, class: opts.class ?? 'IN' }],
  };
  if (opts.ednsUdpSize !== undefined) {
    packet.additionals = [
      { type: 'OPT', name: '.', udpPayloadSize: opts.ednsUdpSize, flags: opts.dnssecOk ? dnsPacket.DNSSEC_OK : 0 } as dnsPacket.Answer,
    ];
  }
  return dnsPacket.encode(packet);
}

export async function query(server: Server, opts: QueryOptions): Promise<QueryResult> {
  const transport = opts.transport ?? 'udp';
  const started = process.hrtime.bigint(); // not performance.now(): node:perf_hooks costs the nanny 0.3 MB
  const timeoutMs = opts.timeoutMs ?? 2000;
  const bytes = await exchange(server, buildQuery(opts), transport, timeoutMs);
  const packet = dnsPacket.decode(bytes) as DecodedReply;
  if (transport === 'udp' && opts.retryTcpOnTruncation && (packet.flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE) {
    // the retry within what is left of the timeout: the caller gave one for the whole query
    const spentMs = Number(process.hrtime.bigint() - started) / 1e6;
    return query(server, { ...opts, transport: 'tcp', timeoutMs: Math.max(1, Math.floor(timeoutMs - spentMs)) });
  }
  return { packet, bytes, transport, rttMs: Number(process.hrtime.bigint() - started) / 1e6 };
}

/** The rcode name of a decoded reply ('NOERROR', 'NXDOMAIN', ...). */
export function rcodeOf(packet: dnsPacket.DecodedPacket): string {
  return (packet as { rcode?: string }).rcode ?? 'NOERROR';
}
