// Reads what the hot path needs straight from the query bytes: header, the one question and the
// EDNS0 OPT record. No allocation beyond the lower-cased name; no dns-packet decode.
//
// Names stay bytes: a name is handled as a latin1 string (one char per octet, so any octet
// round-trips) and only A-Z are folded for lookups (RFC 4343; toLowerCase would also fold latin1
// letters). Replies never re-encode the question name: they copy its bytes and point to them
// (encode.ts).
import { Buffer } from 'node:buffer';

declare global {
  interface Buffer {
    /** Node's own latin1 decoder (what toString('latin1') ends in), without the argument checks. */
    latin1Slice(start: number, end: number): string;
  }
}

export const enum Flag {
  QR = 0x8000,
  AA = 0x0400,
  TC = 0x0200,
  RD = 0x0100,
  RA = 0x0080,
  AD = 0x0020,
  CD = 0x0010,
}

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5, BADVERS: 16 } as const;

/** The rcodes past 15 an upstream may answer (RFC 6891, 8945, 7873), for their names only. */
const EXTENDED_RCODES = { BADKEY: 17, BADTIME: 18, BADMODE: 19, BADNAME: 20, BADALG: 21, BADTRUNC: 22, BADCOOKIE: 23 };
const RCODE_NAMES: Record<number, string> = Object.fromEntries(Object.entries({ ...RCODE, ...EXTENDED_RCODES }).map(([k, v]) => [v, k]));
/** 'NOERROR', ..., 'BADVERS' (16: 4 bits in the header, the rest in the OPT record), or 'RCODE<n>'. */
export const rcodeName = (n: number): string => RCODE_NAMES[n] ?? `RCODE${n}`;
export const TYPE_OPT = 41;
export const TYPE_ANY = 255;
export const CLASS_IN = 1;

export interface ParsedQuery {
  id: number;
  flags: number;
  opcode: number;
  /**
   * The question name as sent (case preserved; latin1: one char per octet), without trailing dot;
   * '' for the root. Built from the query's bytes on first read (see Query).
   */
  readonly name: string;
  /** The name with A-Z lower-cased (nothing else): the lookup key. Built on first read. */
  readonly lname: string;
  /**
   * A seeded 30-bit hash of the lower-cased name, computed while the name is read (see
   * NAME_HASH_SEED): the response cache's key, so that looking a name up neither builds nor hashes
   * a string, nor, on a miss, reads the keys of the names it is compared with.
   */
  readonly keyHash: number;
  qtype: number;
  qclass: number;
  /** Offset and length of the question's name in the query bytes (wire form, case as sent). */
  nameOffset: number;
  nameLength: number;
  /** Offset just after the question section. */
  questionEnd: number;
  /** EDNS0: undefined when the query has no OPT record. */
  edns?: { udpSize: number; version: number; dnssecOk: boolean };
}

/**
 * A parsed query. Its name strings are built on first read, once each, from the query's bytes: a
 * response-cache hit compares the name's bytes (response-cache.ts) and never needs a string, and
 * building one (a call into node's latin1 decoder and a new string) was a quarter of parsing a
 * query. Reading them late is safe because nothing writes to a query's bytes once they arrived:
 * a UDP datagram is a buffer of its own, and a TCP message a view on a read that later reads are
 * appended after (Buffer.concat copies), never over. The scratch space they are built in is used
 * and turned into a string within one call.
 */
class Query implements ParsedQuery {
  // Fields are declared, and set once by the constructor. Declared with initializers or as
  // constructor parameters, the compiled class (ES2022 fields) first defines every one of them as
  // undefined in a separate initializer, then the constructor writes them again: 13 ns of every
  // query (perf, repeated names).
  declare readonly ok: true;
  declare edns?: { udpSize: number; version: number; dnssecOk: boolean };
  declare private asSent: string | undefined;
  declare private folded: string | undefined;
  declare private readonly buf: Buffer;
  declare id: number;
  declare flags: number;
  declare opcode: number;
  /** Whether the name has a letter A-Z (else lname is name). */
  declare private readonly upper: boolean;
  declare readonly keyHash: number;
  declare qtype: number;
  declare qclass: number;
  declare nameOffset: number;
  declare nameLength: number;
  declare questionEnd: number;

  constructor(buf: Buffer, id: number, flags: number, opcode: number, upper: boolean, keyHash: number, qtype: number, qclass: number, nameOffset: number, nameLength: number, questionEnd: number) {
    this.ok = true;
    this.edns = undefined;
    this.asSent = undefined;
    this.folded = undefined;
    this.buf = buf;
    this.id = id;
    this.flags = flags;
    this.opcode = opcode;
    this.upper = upper;
    this.keyHash = keyHash;
    this.qtype = qtype;
    this.qclass = qclass;
    this.nameOffset = nameOffset;
    this.nameLength = nameLength;
    this.questionEnd = questionEnd;
  }

  get name(): string {
    return (this.asSent ??= dottedName(this.buf, this.nameOffset, false));
  }

  get lname(): string {
    return (this.folded ??= this.upper ? dottedName(this.buf, this.nameOffset, true) : this.name);
  }
}

/**
 * The last query parsed, held so that a Query's hidden class outlives the queries. V8 reaches a
 * class instance's final hidden class from the constructor's only through weak transitions, so
 * when no Query is alive (between two queries, in a quiet spell) a full collection frees it, and
 * with it every optimized function that checks for it: the whole query path, parse to reply,
 * then ran unoptimized until V8 compiled it again, half a second of traffic after each full
 * collection (docs/hot-path.md, "Optimized code lost to a full collection"). The last, not the
 * first: should V8 ever move Query to a more general class, the last one has the current class.
 */
let lastQuery: Query | undefined;

/** Scratch space for dottedName (synchronous, so never shared): 255 octets, each dot four, each backslash two. */
const DOTTED = Buffer.allocUnsafeSlow(1024);

/**
 * The dotted form of a name parseQuery has checked (labels only, at most 255 octets), A-Z folded
 * when `fold`: one pass into scratch space and one string, no per-label slices, arrays, join or
 * regular expression. A dot inside a label (a DNS-SD instance name, `my\.printer._ipp._tcp`) is
 * written `\046`, as RFC 1035 5.1 escapes an octet, and a backslash `\\`: the string's dots are
 * then its label boundaries alone, every backslash begins an escape (`\046` is never a label's own
 * four octets), and no such name can read as one under a zone or stub domain it is not under
 * (`x\046cluster.local` is under `local`). No Kubernetes name has either: under the cluster zone
 * it is NXDOMAIN; outside it the query's own bytes are forwarded.
 */
function dottedName(buf: Buffer, off: number, fold: boolean): string {
  let n = 0;
  for (let len = buf[off]!; len !== 0; len = buf[off]!) {
    if (n > 0) DOTTED[n++] = 0x2e;
    const end = off + 1 + len;
    for (let i = off + 1; i < end; i++) {
      const b = buf[i]!;
      if (b === 0x2e) {
        DOTTED[n++] = 0x5c;
        DOTTED[n++] = 0x30;
        DOTTED[n++] = 0x34;
        DOTTED[n++] = 0x36;
      } else if (b === 0x5c) {
        DOTTED[n++] = 0x5c;
        DOTTED[n++] = 0x5c;
      } else DOTTED[n++] = fold && b >= 0x41 && b <= 0x5a ? b | 0x20 : b;
    }
    off = end;
  }
  return DOTTED.latin1Slice(0, n);
}

/**
 * FNV-1a over the lower-cased dotted name, started from a per-process random value: names are
 * chosen by clients, and a hash they could predict would let them pile names onto one key. The
 * cache bounds each key's chain as well (response-cache.ts), so even a collision costs little.
 */
const NAME_HASH_SEED = (Math.random() * 0x100000000) >>> 0;
const FNV_PRIME = 0x01000193;
/** Hashes kept to 30 bits: small integers (Smis) to V8, which Map hashes without a lookup. */
const HASH_MASK = 0x3fffffff;

export type ParseResult =
  /** The query itself (no wrapper object: this runs for every packet). */
  | (ParsedQuery & { ok: true })
  /** id is undefined when the message is too short to answer at all. */
  | { ok: false; id: number | undefined; reason: string; opcode?: number; flags?: number };

/**
 * The 16-bit big-endian number at off, which the caller has checked is inside the message.
 * Buffer's readUInt16BE checks its offset through a wrapped validator on every call, not
 * inlined: 26 ns of each query's parse (perf, repeated names).
 */
export function u16(buf: Uint8Array, off: number): number {
  return (buf[off]! << 8) | buf[off + 1]!;
}

/**
 * Writes v as a 16-bit big-endian number at off, which the caller has sized the buffer for. On
 * the per-query path instead of Buffer's writeUInt16BE, which checks its arguments through
 * wrapped validators and whose method load from a fresh Buffer went through V8's generic load
 * IC in the optimized code (perf and --print-opt-code, unique NXDOMAIN names: about 50 ns).
 */
export function put16(buf: Uint8Array, off: number, v: number): void {
  buf[off] = v >>> 8;
  buf[off + 1] = v & 0xff;
}

/** Parses a query. Anything malformed returns a reason (the server answers FORMERR or drops). */
export function parseQuery(buf: Buffer): ParseResult {
  if (buf.length < 12) return { ok: false, id: undefined, reason: 'shorter than a DNS header' };
  const id = u16(buf, 0);
  const flags = u16(buf, 2);
  const opcode = (flags >> 11) & 0xf;
  if (flags & Flag.QR) return { ok: false, id: undefined, reason: 'a response, not a query' }; // never answer answers
  const qdcount = u16(buf, 4);
  const ancount = u16(buf, 6);
  const nscount = u16(buf, 8);
  const arcount = u16(buf, 10);
  if (qdcount !== 1) return { ok: false, id, reason: `${qdcount} questions`, opcode, flags };
  // walk the name: labels only (no compression pointer is valid in a question we parse first);
  // checked and hashed here, turned into strings only when read (Query)
  let off = 12;
  let n = 0; // length of the dotted name
  let upper = false;
  let h = NAME_HASH_SEED;
  for (;;) {
    if (off >= buf.length) return { ok: false, id, reason: 'question name runs past the end', opcode, flags };
    const len = buf[off]!;
    if (len === 0) {
      off++;
      break;
    }
    if (len > 63) return { ok: false, id, reason: 'bad label length or compression in question', opcode, flags };
    if (off + 1 + len > buf.length) return { ok: false, id, reason: 'question label runs past the end', opcode, flags };
    // RFC 1035 2.3.4: 255 octets on the wire at most, 253 dotted (the first length octet and the
    // root's are not in the dotted form). n + 1 + len: the dotted length with this label (one over
    // for the first label, which is 63 octets at most anyway)
    if (n + 1 + len > 253) return { ok: false, id, reason: 'question name longer than 255 octets', opcode, flags };
    if (n > 0) {
      n++;
      h = Math.imul(h ^ 0x2e, FNV_PRIME);
    }
    const end = off + 1 + len;
    for (let i = off + 1; i < end; i++) {
      let b = buf[i]!;
      if (b >= 0x41 && b <= 0x5a) {
        b |= 0x20;
        upper = true;
      }
      h = Math.imul(h ^ b, FNV_PRIME);
    }
    n += len;
    off = end;
  }
  if (off + 4 > buf.length) return { ok: false, id, reason: 'question type/class missing', opcode, flags };
  const qtype = u16(buf, off);
  const qclass = u16(buf, off + 2);
  const questionEnd = off + 4;
  const query = new Query(buf, id, flags, opcode, upper, h & HASH_MASK, qtype, qclass, 12, off - 12, questionEnd);
  lastQuery = query;
  // EDNS0: look for the OPT record among the additional records (skipping any answer/authority RRs).
  if (arcount > 0) {
    let p = questionEnd;
    const rrs = ancount + nscount + arcount;
    for (let i = 0; i < rrs; i++) {
      const nameEnd = skipName(buf, p);
      if (nameEnd < 0 || nameEnd + 10 > buf.length) return { ok: false, id, reason: 'malformed resource record', opcode, flags };
      const type = u16(buf, nameEnd);
      const rdlen = u16(buf, nameEnd + 8);
      if (nameEnd + 10 + rdlen > buf.length) return { ok: false, id, reason: 'resource record runs past the end', opcode, flags };
      if (type === TYPE_OPT && i >= ancount + nscount) {
        if (query.edns) return { ok: false, id, reason: 'more than one OPT record', opcode, flags };
        const ttl = u16(buf, nameEnd + 4) * 0x10000 + u16(buf, nameEnd + 6);
        query.edns = { udpSize: u16(buf, nameEnd + 2), version: (ttl >>> 16) & 0xff, dnssecOk: (ttl & 0x8000) !== 0 };
      }
      p = nameEnd + 10 + rdlen;
    }
  }
  return query;
}

/**
 * Folds A-Z over buf[off, off + len), a name in wire form (length octets and labels), in place:
 * how the response cache keeps the names of its replies, to be compared with a later question's
 * bytes by matchFoldedName. Length octets are at most 63, never a letter: they stay as they are.
 */
export function foldName(buf: Uint8Array, off: number, len: number): void {
  for (let i = off; i < off + len; i++) {
    const b = buf[i]!;
    if (b >= 0x41 && b <= 0x5a) buf[i] = b | 0x20;
  }
}

/** How a question's name compares with a name kept folded (foldName; see matchFoldedName). */
export const enum NameMatch {
  DIFFERENT = 0,
  /** Octet for octet: the question has no capital letter. */
  EXACT = 1,
  /** The same once the question's A-Z are folded. */
  FOLDED = 2,
}

/**
 * Whether buf[off, off + len) is the folded name at key[keyOff, keyOff + len) (foldName), and
 * how. Two typed arrays, one comparison per octet when the spelling is the key's (most questions
 * are lower-case); a differing octet is looked at again only to see whether it is the capital of
 * the key's letter.
 */
export function matchFoldedName(key: Uint8Array, keyOff: number, buf: Uint8Array, off: number, len: number): NameMatch {
  let m = NameMatch.EXACT;
  for (let i = 0; i < len; i++) {
    const c = key[keyOff + i]!;
    const b = buf[off + i]!;
    if (c !== b) {
      if (b < 0x41 || b > 0x5a || (b | 0x20) !== c) return NameMatch.DIFFERENT;
      m = NameMatch.FOLDED;
    }
  }
  return m;
}

/**
 * Copies src[start, end) to dst at `at`, byte by byte. For the question (a few dozen bytes) on the
 * per-query path: Node's Buffer#copy from a source offset other than 0 first wraps that range in
 * a new Uint8Array (96 bytes of garbage per call, measured with V8's sampling heap profiler), and
 * garbage is what sets how often the young generation is collected under load (docs/hot-path.md).
 */
export function copyBytes(src: Uint8Array, start: number, end: number, dst: Uint8Array, at: number): void {
  for (let i = start; i < end; i++) dst[at++] = src[i]!;
}

/** Offset just after the (possibly compressed) name at `off`, or -1 when it runs off the message. */
export function skipName(buf: Buffer, off: number): number {
  for (let guard = 0; guard < 128; guard++) {
    if (off >= buf.length) return -1;
    const len = buf[off]!;
    if (len === 0) return off + 1;
    if ((len & 0xc0) === 0xc0) return off + 2 > buf.length ? -1 : off + 2;
    if (len > 63) return -1;
    off += 1 + len;
  }
  return -1;
}

/** Where a message's OPT record lies: the start of its owner, the end of its owner (its type follows), the end of its RDATA. */
export interface OptPlace {
  start: number;
  nameEnd: number;
  end: number;
}

/**
 * A message's records read from `questionEnd`: its additional section's OPT record, if any, and
 * where its last record ends (bytes after it are none of the message's); undefined when a record
 * does not read.
 */
export function scanRecords(buf: Buffer, questionEnd: number): { opt: OptPlace | undefined; end: number } | undefined {
  const before = u16(buf, 6) + u16(buf, 8);
  const rrs = before + u16(buf, 10);
  let p = questionEnd;
  let opt: OptPlace | undefined;
  for (let i = 0; i < rrs; i++) {
    const nameEnd = skipName(buf, p);
    if (nameEnd < 0 || nameEnd + 10 > buf.length) return undefined;
    const end = nameEnd + 10 + u16(buf, nameEnd + 8);
    if (end > buf.length) return undefined;
    if (opt === undefined && i >= before && u16(buf, nameEnd) === TYPE_OPT) opt = { start: p, nameEnd, end };
    p = end;
  }
  return { opt, end: p };
}

/**
 * An OPT record's options made none, in `out` (a copy of the message): cut off when the record is
 * the message's last (as every common server writes it), else, where a cut would move the records
 * after it and every compression pointer into them, written over in place as one PADDING option
 * of zeros (RFC 7830) of the same length. Returns the message's new length.
 */
export function clearEdnsOptions(out: Buffer, opt: OptPlace, last: boolean): number {
  const rdlen = opt.end - opt.nameEnd - 10;
  if (rdlen === 0) return out.length;
  if (last) {
    put16(out, opt.nameEnd + 8, 0);
    return opt.nameEnd + 10;
  }
  if (rdlen >= 4) {
    put16(out, opt.nameEnd + 10, EDNS_PADDING);
    put16(out, opt.nameEnd + 12, rdlen - 4);
    out.fill(0, opt.nameEnd + 14, opt.end);
  }
  return out.length;
}
const EDNS_PADDING = 12;

/**
 * A copy of the query with its OPT record's options removed, for a query forwarded upstream: an
 * OPT record is hop by hop (RFC 6891 6.1.1), and its options are the client's with us (a DNS
 * cookie, RFC 7873, is one per client and server; padding, keepalive), not ours with the upstream.
 */
export function withoutEdnsOptions(query: Buffer, questionEnd: number): Buffer {
  const scan = scanRecords(query, questionEnd);
  const out = Buffer.from(query);
  if (scan?.opt === undefined) return out;
  const length = clearEdnsOptions(out, scan.opt, scan.opt.end === scan.end);
  return length === out.length ? out : out.subarray(0, length);
}

/**
 * Lowers the UDP payload size a query's OPT record advertises to `max` (in place), leaving a
 * smaller one as it is. For a query forwarded over UDP: an upstream told 4096 may send a reply in
 * IP fragments, which some networks drop (the asker then waits out its timeout); told 1232, it
 * sends TC instead and the asker retries over TCP (what dnsmasq and the 2020 DNS flag day do).
 */
export function capEdnsUdpSize(buf: Buffer, questionEnd: number, max: number): void {
  const rrs = u16(buf, 6) + u16(buf, 8) + u16(buf, 10);
  let p = questionEnd;
  for (let i = 0; i < rrs; i++) {
    const nameEnd = skipName(buf, p);
    if (nameEnd < 0 || nameEnd + 10 > buf.length) return;
    if (u16(buf, nameEnd) === TYPE_OPT && u16(buf, nameEnd + 2) > max) put16(buf, nameEnd + 2, max);
    p = nameEnd + 10 + u16(buf, nameEnd + 8);
  }
}

/** A minimal reply (header + the question if readable): FORMERR, SERVFAIL, REFUSED, NOTIMP. */
export function errorReply(query: Buffer, id: number, rcode: number, questionEnd?: number, extraFlags = 0): Buffer {
  const qlen = questionEnd !== undefined ? questionEnd - 12 : 0;
  const out = Buffer.alloc(12 + qlen);
  out.writeUInt16BE(id, 0);
  const qflags = query.length >= 4 ? query.readUInt16BE(2) : 0;
  out.writeUInt16BE(Flag.QR | (qflags & (0x7800 | Flag.RD | Flag.CD)) | extraFlags | rcode, 2);
  if (qlen > 0) {
    out.writeUInt16BE(1, 4);
    query.copy(out, 12, 12, questionEnd);
  }
  return out;
}
