// Resolution → reply bytes. The header and question are copied from the query (so the client's
// 0x20 case and unknown qtypes survive untouched); records are encoded with dns-packet.
import { Buffer } from 'node:buffer';
import * as dnsPacket from 'dns-packet';
import { Flag, RCODE, TYPE_OPT, clearEdnsOptions, copyBytes, put16, scanRecords, skipName, u16, type ParsedQuery } from './wire.js';
import type { Rcode } from '../resolve/types.js';

type RR = dnsPacket.Answer;
const rrCodec = (dnsPacket as unknown as { answer: { encode(a: RR): Buffer; encodingLength(a: RR): number } }).answer;

/** The UDP payload size we advertise in our OPT record (DNS flag day 2020). */
export const OUR_UDP_SIZE = 1232;
/**
 * The largest UDP reply we send, whatever the client advertises: 1232 bytes fit the IPv6 minimum
 * MTU (1280) less headers, so a reply is never fragmented (DNS Flag Day 2020). Larger answers get
 * TC and the client retries over TCP.
 */
export const MAX_UDP_SIZE = OUR_UDP_SIZE;
const RCODE_BADVERS = 16;

export interface EncodeInput {
  rcode: number;
  aa: boolean;
  answers: readonly RR[];
  authorities: readonly RR[];
  additionals: readonly RR[];
}

export interface Encoded {
  bytes: Buffer;
  /** TC set: answers or authority records did not fit. */
  truncated: boolean;
  /**
   * Records were left out to fit the limit (TC set, or additional records dropped without it):
   * the bytes depend on the limit, and a client with a larger one must not get them.
   */
  cut: boolean;
  /** Offsets of names to patch with the client's spelling on cache hits (the question; answers point to it). */
  nameOffsets: readonly number[];
}

/**
 * The question's name, at 12: the only name a reply of ours needs patched. One frozen array for
 * every reply and cache entry instead of one each (an allocation per encoded reply, and about
 * 32 bytes per cache entry). Measured on a cache hit with cold caches: no difference beyond the
 * noise (4.2-4.9 µs before, 4.4-5.3 after), so it is kept for the memory only.
 */
export const QUESTION_NAME_ONLY: readonly number[] = Object.freeze([12]);

/**
 * The most answer records a reply of `limit` octets can need built: one more than fit if every
 * record were the smallest we write (16 octets: a pointer to the question, type, class, TTL,
 * length and an IPv4 address). A longer answer then still overflows the limit, so the reply is
 * cut and TC set exactly as with every record built, and its bytes are the same; the resolver
 * builds 78 records for a UDP reply, not a headless Service's thousands.
 */
export function answerBudget(limit: number): number {
  return Math.floor(limit / 16) + 1;
}

/** The most a reply may take: 512 without EDNS, min(client's size, 1232) with it; 65535 over TCP. */
export function replyLimit(q: ParsedQuery, transport: 'udp' | 'tcp'): number {
  if (transport === 'tcp') return 65535;
  if (!q.edns) return 512;
  return Math.min(Math.max(q.edns.udpSize, 512), MAX_UDP_SIZE);
}

function optRecord(q: ParsedQuery, extendedRcode = 0): Buffer {
  const b = Buffer.alloc(11);
  // name: root (0); type OPT; class: our UDP size; ttl: ext-rcode, version 0, DO echoed; rdlen 0
  b.writeUInt16BE(TYPE_OPT, 1);
  b.writeUInt16BE(OUR_UDP_SIZE, 3);
  b.writeUInt8(extendedRcode, 5);
  b.writeUInt16BE(q.edns?.dnssecOk ? 0x8000 : 0, 7);
  return b;
}

function encodeRR(rr: RR): Buffer | undefined {
  try {
    return encodePlain(rr, false) ?? rrCodec.encode(rr);
  } catch {
    return undefined; // a record we cannot encode is left out rather than failing the reply
  }
}

/**
 * The type number of a record encodePlain writes, else 0. A switch, not a keyed load from an
 * object: the key changes from record to record (rcodeNumber below says why that costs).
 */
function plainType(type: string): number {
  switch (type) {
    case 'A':
      return 1;
    case 'CNAME':
      return 5;
    case 'PTR':
      return 12;
    case 'SRV':
      return 33;
    default:
      return 0;
  }
}

/**
 * The octets of a plain name on the wire (its labels and the root), or -1 when it is not plain:
 * printable ASCII but for the dots that end labels, no backslash, labels of 1-63 octets, the root
 * ('.') or dotted labels with at most one trailing dot. Anything else goes to dns-packet.
 */
function plainNameLength(name: string): number {
  const n = name.length;
  if (n === 1 && name.charCodeAt(0) === 0x2e) return 1;
  const end = n > 0 && name.charCodeAt(n - 1) === 0x2e ? n - 1 : n;
  if (end === 0 || end > 253) return -1;
  let label = 0;
  for (let i = 0; i < end; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x2e) {
      if (label === 0) return -1;
      label = 0;
    } else if (c <= 0x20 || c >= 0x7f || c === 0x5c || ++label > 63) return -1;
  }
  return label === 0 ? -1 : end + 2;
}

/** Writes a name plainNameLength accepted, `len` its octets; returns the offset after it. */
function writePlainName(name: string, len: number, buf: Buffer, at: number): number {
  if (len === 1) {
    buf[at] = 0;
    return at + 1;
  }
  let lenAt = at;
  let o = at + 1;
  const end = at + len - 1; // the root's octet
  for (let i = 0; o < end; i++, o++) {
    const c = name.charCodeAt(i);
    if (c === 0x2e) {
      buf[lenAt] = o - lenAt - 1;
      lenAt = o;
    } else buf[o] = c;
  }
  buf[lenAt] = o - lenAt - 1;
  buf[end] = 0;
  return end + 1;
}

/**
 * A, SRV, PTR and CNAME records of class IN with plain names, written here; undefined for any
 * other record (dns-packet encodes it). These are nearly every record of a cluster's answers, and
 * dns-packet spends most of a record on its names: a regular expression and a split per name, a
 * UTF-8 Buffer#write per label. The bytes are the same (server-encode.test.ts compares both on
 * random records). An uncached SRV answer of a headless service of 1,000 endpoints over TCP (64
 * KiB) took 4.2 ms, most of it there. Numbers are written by put16, as the headers are (below:
 * Buffer's writers check their arguments through wrapped validators). `ownerIsQuestion`: the
 * owner is written as a pointer to the question's name (encodeReply).
 */
export function encodePlain(answer: RR, ownerIsQuestion: boolean): Buffer | undefined {
  const rr = answer as { type: string; name: string; class?: string; flush?: boolean; ttl?: number; data?: unknown };
  const type = plainType(rr.type);
  if (type === 0 || (rr.class !== undefined && rr.class !== 'IN') || rr.flush) return undefined;
  const ownerLen = ownerIsQuestion ? 2 : plainNameLength(rr.name);
  if (ownerLen < 0) return undefined;
  let rdLen: number;
  let target = '';
  let targetLen = 0;
  if (type === 1) {
    if (typeof rr.data !== 'string' || !isDottedQuad(rr.data)) return undefined;
    rdLen = 4;
  } else {
    target = type === 33 ? (rr.data as dnsPacket.SrvData).target : (rr.data as string);
    if (typeof target !== 'string') return undefined;
    targetLen = plainNameLength(target);
    if (targetLen < 0) return undefined;
    rdLen = type === 33 ? 6 + targetLen : targetLen;
  }
  const b = Buffer.allocUnsafe(ownerLen + 10 + rdLen);
  let o: number;
  if (ownerIsQuestion) {
    b[0] = 0xc0;
    b[1] = 0x0c;
    o = 2;
  } else o = writePlainName(rr.name, ownerLen, b, 0);
  put16(b, o, type);
  put16(b, o + 2, 1);
  const ttl = inRange(rr.ttl || 0, 0xffffffff);
  put16(b, o + 4, ttl / 0x10000);
  put16(b, o + 6, ttl);
  put16(b, o + 8, rdLen);
  o += 10;
  if (type === 1) {
    writeDottedQuad(rr.data as string, b, o);
  } else {
    if (type === 33) {
      const d = rr.data as dnsPacket.SrvData;
      put16(b, o, inRange(d.priority || 0, 0xffff));
      put16(b, o + 2, inRange(d.weight || 0, 0xffff));
      put16(b, o + 4, inRange(d.port || 0, 0xffff));
      o += 6;
    }
    writePlainName(target, targetLen, b, o);
  }
  return b;
}

/** A record's number, refused out of range as dns-packet's Buffer writes refuse it (the record is then left out). */
function inRange(v: number, max: number): number {
  if (!(v >= 0 && v <= max)) throw new RangeError(`${v} is not within 0-${max}`);
  return v;
}

/** Four decimal octets of 0-255, dot-separated, one to three digits each. */
function isDottedQuad(ip: string): boolean {
  let dots = 0;
  let digits = 0;
  let v = 0;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || ++dots > 3) return false;
      digits = 0;
      v = 0;
    } else if (c >= 0x30 && c <= 0x39 && ++digits <= 3) {
      v = v * 10 + c - 0x30;
      if (v > 255) return false;
    } else return false;
  }
  return dots === 3 && digits > 0;
}

function writeDottedQuad(ip: string, b: Buffer, at: number): void {
  let v = 0;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (c === 0x2e) {
      b[at++] = v;
      v = 0;
    } else v = v * 10 + c - 0x30;
  }
  b[at] = v;
}

/**
 * Builds the reply. Over the limit: additional records go first (no TC needed), then answers and
 * authority are cut and TC is set so the client retries over TCP.
 */
export function encodeReply(query: Buffer, q: ParsedQuery, input: EncodeInput, limit: number): Encoded {
  const qlen = q.questionEnd - 12;
  const opt = q.edns ? optRecord(q) : undefined;
  const fixed = 12 + qlen + (opt ? opt.length : 0);
  // dns-packet writes names in full, and as UTF-8, while the question's name is bytes (a latin1
  // string here). A record owned by the question name is therefore never written by dns-packet:
  // it is encoded with the root as owner (one 0x00 octet) and that octet is replaced by a pointer
  // to the question (RFC 1035 4.1.4). The owner is then the client's own bytes (0x20 case and
  // non-ASCII octets included), and a third of the size.
  const qname = q.name;
  const encodeOne = (rr: RR): Buffer | undefined => {
    if (rr.name !== qname) return encodeRR(rr);
    try {
      const plain = encodePlain(rr, true);
      if (plain) return plain;
    } catch {
      return undefined;
    }
    const b = encodeRR({ ...rr, name: '.' } as RR);
    if (!b) return undefined;
    const c = Buffer.allocUnsafe(b.length + 1);
    c[0] = 0xc0;
    c[1] = 0x0c;
    b.copy(c, 2, 1);
    return c;
  };

  // Records are encoded only while they fit: a large answer over UDP costs the records that are
  // sent, not the whole set (a headless service of 1000 endpoints, a wildcard).
  let size = fixed;
  let truncated = false;
  let cut = false;
  const take = (list: readonly RR[], mandatory: boolean): Buffer[] => {
    const out: Buffer[] = [];
    for (const rr of list) {
      if (truncated) break;
      const b = encodeOne(rr);
      if (!b) continue; // a record we cannot encode is left out rather than failing the reply
      if (size + b.length > limit) {
        if (mandatory) truncated = true;
        cut = true;
        break;
      }
      out.push(b);
      size += b.length;
    }
    return out;
  };
  /**
   * The additional section, which may be left out without TC (RFC 2181 9): but never half an
   * RRset, which a cache would keep as the whole. The records of the RRset that no longer fits
   * (a headless service's name shared by many endpoints, an endpoint's addresses) go with it.
   */
  const takeAdditional = (list: readonly RR[]): Buffer[] => {
    const out: Buffer[] = [];
    const rrs: RR[] = [];
    for (const rr of list) {
      const b = encodeOne(rr);
      if (!b) continue;
      if (size + b.length > limit) {
        cut = true;
        // one pass (a splice per record would be quadratic in a 64 KiB TCP answer)
        const owner = rr.name.toLowerCase();
        const kept: Buffer[] = [];
        for (let k = 0; k < out.length; k++) {
          if (rrs[k]!.type === rr.type && rrs[k]!.name.toLowerCase() === owner) size -= out[k]!.length;
          else kept.push(out[k]!);
        }
        return kept;
      }
      out.push(b);
      rrs.push(rr);
      size += b.length;
    }
    return out;
  };
  const an = take(input.answers, true);
  const ns = take(input.authorities, true);
  const ar = truncated ? [] : takeAdditional(input.additionals);

  const out = Buffer.allocUnsafe(size);
  put16(out, 0, q.id);
  let flags = Flag.QR | (q.flags & (0x7800 | Flag.RD | Flag.CD)) | Flag.RA | input.rcode;
  if (input.aa) flags |= Flag.AA;
  if (truncated) flags |= Flag.TC;
  put16(out, 2, flags);
  put16(out, 4, 1);
  put16(out, 6, an.length);
  put16(out, 8, ns.length);
  put16(out, 10, ar.length + (opt ? 1 : 0));
  copyBytes(query, 12, q.questionEnd, out, 12);
  let off = 12 + qlen;
  for (const list of [an, ns, ar]) {
    for (let i = 0; i < list.length; i++) {
      out.set(list[i]!, off);
      off += list[i]!.length;
    }
  }
  if (opt) out.set(opt, off);
  return { bytes: out, truncated, cut, nameOffsets: QUESTION_NAME_ONLY };
}

/** An error or empty reply with EDNS handled (BADVERS for an EDNS version we do not speak). */
export function encodeRcode(query: Buffer, q: ParsedQuery, rcode: number, aa = false, ra = true): Buffer {
  const qlen = q.questionEnd - 12;
  const badvers = q.edns !== undefined && q.edns.version > 0;
  const opt = q.edns ? optRecord(q, badvers ? RCODE_BADVERS >> 4 : 0) : undefined;
  const out = Buffer.alloc(12 + qlen + (opt ? opt.length : 0));
  out.writeUInt16BE(q.id, 0);
  const code = badvers ? RCODE_BADVERS & 0xf : rcode;
  out.writeUInt16BE(Flag.QR | (q.flags & (0x7800 | Flag.RD | Flag.CD)) | (aa ? Flag.AA : 0) | (ra ? Flag.RA : 0) | code, 2);
  out.writeUInt16BE(1, 4);
  out.writeUInt16BE(opt ? 1 : 0, 10);
  query.copy(out, 12, 12, q.questionEnd);
  if (opt) opt.copy(out, 12 + qlen);
  return out;
}

/**
 * An rcode's number from its name. Comparisons, not RCODE[name]: a keyed load whose key varies
 * from query to query (NOERROR, NXDOMAIN) goes megamorphic, a lookup in V8's stub cache on
 * every query (perf, the bench's mix).
 */
export function rcodeNumber(name: Rcode): number {
  switch (name) {
    case 'NOERROR':
      return RCODE.NOERROR;
    case 'NXDOMAIN':
      return RCODE.NXDOMAIN;
    case 'SERVFAIL':
      return RCODE.SERVFAIL;
    case 'REFUSED':
      return RCODE.REFUSED;
    case 'FORMERR':
      return RCODE.FORMERR;
    case 'NOTIMP':
      return RCODE.NOTIMP;
  }
}

/**
 * An upstream's reply with its OPT record made ours for this client (RFC 6891 6.1.1: an OPT
 * record is hop by hop, never relayed): our UDP size, the client's DO bit, no options, the
 * upstream's extended rcode kept; one added when the client sent EDNS and the upstream answered
 * without, none when the client sent none. An upstream's DNS cookie relayed for outside names,
 * while our own answers carry none, made a cookie-aware client (BIND as a forwarder, c-ares) take
 * every cluster answer for a spoof and ask again over TCP; its TCP keepalive told the client an
 * idle timeout that is not ours. Nothing before the OPT record moves, and the records after it
 * only when it is cut off whole (clearEdnsOptions): compression pointers keep their targets. A
 * reply whose records do not read is relayed as it is (the forwarder checked it already).
 */
export function relayedEdns(reply: Buffer, q: ParsedQuery): Buffer {
  if (reply.length < 12 || u16(reply, 4) !== 1) return reply;
  const nameEnd = skipName(reply, 12);
  if (nameEnd < 0 || nameEnd + 4 > reply.length) return reply;
  const scan = scanRecords(reply, nameEnd + 4);
  if (scan === undefined) return reply;
  const { opt, end } = scan;
  if (q.edns === undefined) {
    // an upstream's OPT to a client that sent none: taken off when it is the last record (a
    // record after it would move); an upstream that adds one unasked is rare, and its reply decodes
    if (opt === undefined || opt.end !== end) return reply;
    const out = Buffer.from(reply.subarray(0, opt.start));
    put16(out, 10, u16(out, 10) - 1);
    return out;
  }
  if (opt === undefined) {
    // ours after the last record (bytes after it, none of the message's, left out)
    const out = Buffer.alloc(end + 11);
    reply.copy(out, 0, 0, end);
    writeOpt(out, end, q);
    put16(out, 10, u16(out, 10) + 1);
    return out;
  }
  const out = Buffer.from(reply.subarray(0, end));
  put16(out, opt.nameEnd + 2, OUR_UDP_SIZE);
  put16(out, opt.nameEnd + 6, q.edns.dnssecOk ? 0x8000 : 0); // the TTL's low half: the flags (its high half, extended rcode and version, kept)
  const length = clearEdnsOptions(out, opt, opt.end === end);
  return length === out.length ? out : out.subarray(0, length);
}

/**
 * An upstream's reply relayed over UDP must fit the client's limit too (the upstream may have
 * been asked over TCP, or honour a larger size than we do): over the limit, the header and the
 * question with TC set, so the client retries over TCP, where the whole reply is relayed.
 */
export function fitRelayed(reply: Buffer, query: Buffer, q: ParsedQuery, limit: number): Buffer {
  if (reply.length < 12) return reply;
  const upstreamFlags = reply.readUInt16BE(2);
  // the forwarder's own TC reply (an upstream's cut short: forward/forwarder.ts) is the question
  // alone, without OPT: rebuilt below with ours when the client sent EDNS (RFC 6891 6.1.1)
  const bareTc = (upstreamFlags & Flag.TC) !== 0 && q.edns !== undefined && reply.readUInt16BE(6) === 0 && reply.readUInt16BE(10) === 0;
  if (reply.length <= limit && !bareTc) return reply;
  const out = encodeRcode(query, q, upstreamFlags & 0xf, (upstreamFlags & Flag.AA) !== 0, (upstreamFlags & Flag.RA) !== 0);
  out.writeUInt16BE(out.readUInt16BE(2) | Flag.TC, 2);
  return out;
}

/**
 * A negative answer's authority record in wire form, twice over, with its names compressed (RFC
 * 1035 4.1.4) as CoreDNS writes them: the zone's SOA written out is 93 octets at cluster.local,
 * compressed 54, and it is in most of the replies a cluster gets (the search-path expansions).
 * The pointers' target depends on the reply, so each form keeps where its pointers go (`slots`)
 * and encodeNegative writes them:
 * - `inQuestion`: the owner is a pointer to the zone's labels at the end of the question, and the
 *   SOA's two names, when they lie under the zone, end in the same pointer. Used when the
 *   question ends with the owner's exact bytes: a client's own spelling of the zone
 *   (CLUSTER.local) is never borrowed, so every client reads the owner as we spell it;
 * - `standalone`: the owner written out after the question, the two names pointing to it.
 * A record that is not an SOA (the autopath path passes whatever authority it has) is kept as
 * dns-packet wrote it, in both forms, with no slots.
 */
interface NegativeTemplate {
  /** The owner's wire labels, to find at the end of the question; undefined: never compress. */
  owner: Uint8Array | undefined;
  inQuestion: Uint8Array;
  inQuestionSlots: readonly number[];
  standalone: Uint8Array;
  standaloneSlots: readonly number[];
}
const negativeTemplates = new WeakMap<RR, NegativeTemplate>();
const TYPE_SOA = 6;

/**
 * The name b[start, end) with its ending `owner` (whole labels, exact bytes) replaced by a pointer
 * placeholder: [bytes, offset of the placeholder], or [the name as it is, -1].
 */
function pointToOwner(b: Uint8Array, start: number, end: number, owner: Uint8Array): [Uint8Array, number] {
  for (let p = start; p < end - 1; p += b[p]! + 1) {
    if (end - p === owner.length && Buffer.compare(b.subarray(p, end), owner) === 0) {
      const out = new Uint8Array(p - start + 2);
      out.set(b.subarray(start, p));
      return [out, p - start];
    }
  }
  return [b.subarray(start, end), -1];
}

function negativeTemplate(rr: RR): NegativeTemplate | undefined {
  const wire = encodeRR(rr);
  if (!wire) return undefined;
  const ownerEnd = skipName(wire, 0);
  const asWritten = { owner: undefined, inQuestion: wire, inQuestionSlots: [], standalone: wire, standaloneSlots: [] };
  // the root as owner has nothing to share (and a pointer to the question's last octet would be silly)
  if (ownerEnd <= 1 || wire[ownerEnd] !== 0 || wire[ownerEnd + 1] !== TYPE_SOA) return asWritten;
  const owner = wire.subarray(0, ownerEnd);
  const rdata = ownerEnd + 10;
  const mEnd = skipName(wire, rdata);
  const rEnd = mEnd < 0 ? -1 : skipName(wire, mEnd);
  if (rEnd < 0) return asWritten;
  const [mname, mSlot] = pointToOwner(wire, rdata, mEnd, owner);
  const [rname, rSlot] = pointToOwner(wire, mEnd, rEnd, owner);
  const rest = wire.subarray(rEnd); // serial, refresh, retry, expire, minimum
  const build = (ownerBytes: Uint8Array): [Uint8Array, number[]] => {
    const fields = wire.subarray(ownerEnd, rdata); // type, class, ttl, rdlength (rewritten below)
    const rdlen = mname.length + rname.length + rest.length;
    const out = new Uint8Array(ownerBytes.length + fields.length + rdlen);
    let o = 0;
    out.set(ownerBytes, o);
    o += ownerBytes.length;
    out.set(fields, o);
    put16(out, o + 8, rdlen);
    o += fields.length;
    const slots: number[] = [];
    if (mSlot >= 0) slots.push(o + mSlot);
    out.set(mname, o);
    o += mname.length;
    if (rSlot >= 0) slots.push(o + rSlot);
    out.set(rname, o);
    o += rname.length;
    out.set(rest, o);
    return [out, slots];
  };
  const [inQuestion, qSlots] = build(new Uint8Array(2));
  const [standalone, standaloneSlots] = build(owner);
  return { owner, inQuestion, inQuestionSlots: [0, ...qSlots], standalone, standaloneSlots };
}

/**
 * Where the question's name ends with `owner`'s exact bytes, starting a label: the offset of those
 * labels in the query, or -1. The question was checked by parseQuery (lengths, no pointers).
 */
function ownerInQuestion(query: Uint8Array, nameEndAt: number, owner: Uint8Array): number {
  const at = nameEndAt - owner.length;
  if (at < 12) return -1;
  for (let i = 0; i < owner.length; i++) if (query[at + i] !== owner[i]) return -1;
  let p = 12;
  while (p < at) p += query[p]! + 1;
  return p === at ? at : -1;
}

/**
 * NXDOMAIN or NODATA: header, the question copied, the zone's SOA in authority, OPT. Built from
 * the SOA's wire forms kept once per zone (NegativeTemplate), so the most common reply a cluster
 * sends (the search-path expansions of external names, all NXDOMAIN) costs one allocation, three
 * copies and the pointers written, instead of a dns-packet encode. Undefined when the SOA cannot
 * be encoded or does not fit.
 */
export function encodeNegative(query: Buffer, q: ParsedQuery, rcode: number, aa: boolean, soa: RR, limit: number, standalone = false): Buffer | undefined {
  let tpl = negativeTemplates.get(soa);
  if (!tpl) {
    tpl = negativeTemplate(soa);
    if (!tpl) return undefined;
    negativeTemplates.set(soa, tpl);
  }
  const qlen = q.questionEnd - 12;
  const inQuestion = tpl.owner && !standalone ? ownerInQuestion(query, q.questionEnd - 4, tpl.owner) : -1;
  const rr = inQuestion >= 0 ? tpl.inQuestion : tpl.standalone;
  const slots = inQuestion >= 0 ? tpl.inQuestionSlots : tpl.standaloneSlots;
  const target = inQuestion >= 0 ? inQuestion : 12 + qlen;
  const size = 12 + qlen + rr.length + (q.edns ? 11 : 0);
  if (size > limit) return undefined;
  const out = Buffer.allocUnsafe(size);
  // the header byte by byte (put16), the question and the SOA copied: nothing checked twice
  put16(out, 0, q.id);
  put16(out, 2, Flag.QR | (q.flags & (0x7800 | Flag.RD | Flag.CD)) | Flag.RA | (aa ? Flag.AA : 0) | rcode);
  put16(out, 4, 1); // qdcount
  put16(out, 6, 0); // ancount
  put16(out, 8, 1); // nscount
  put16(out, 10, q.edns ? 1 : 0);
  copyBytes(query, 12, q.questionEnd, out, 12);
  const at = 12 + qlen;
  out.set(rr, at);
  for (let i = 0; i < slots.length; i++) put16(out, at + slots[i]!, 0xc000 | target);
  if (q.edns) writeOpt(out, at + rr.length, q);
  return out;
}

/** Our OPT record at `off`: root name, type OPT, our UDP size, no extended rcode, DO echoed, no options. */
function writeOpt(out: Buffer, off: number, q: ParsedQuery): void {
  out[off] = 0;
  put16(out, off + 1, TYPE_OPT);
  put16(out, off + 3, OUR_UDP_SIZE);
  put16(out, off + 5, 0); // extended rcode, version
  put16(out, off + 7, q.edns?.dnssecOk ? 0x8000 : 0);
  put16(out, off + 9, 0); // no options
}
