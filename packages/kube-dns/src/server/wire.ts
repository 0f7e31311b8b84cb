// Reads what the hot path needs straight from the query bytes: header, the one question and the
// EDNS0 OPT record. No allocation beyond the lower-cased name; no dns-packet decode.
//
// Names stay bytes: a name is handled as a latin1 string (one char per octet, so any octet
// round-trips) and only A-Z are folded for lookups (asciiLower). Replies never re-encode the
// question name: they copy its bytes and point to them (encode.ts).
import { asciiLower } from '../records/names.js';

export const enum Flag {
  QR = 0x8000,
  AA = 0x0400,
  TC = 0x0200,
  RD = 0x0100,
  RA = 0x0080,
  AD = 0x0020,
  CD = 0x0010,
}

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
export const TYPE_OPT = 41;
export const TYPE_ANY = 255;
export const CLASS_IN = 1;

export interface ParsedQuery {
  id: number;
  flags: number;
  opcode: number;
  /** The question name as sent (case preserved; latin1: one char per octet), without trailing dot; '' for the root. Decoded on first use. */
  readonly name: string;
  /** The name with A-Z lower-cased (nothing else): the lookup key. Decoded on first use. */
  readonly lname: string;
  /** The question name's wire bytes, A-Z lower-cased, as a latin1 string: the cache key (no decoding needed). */
  wireKey: string;
  qtype: number;
  qclass: number;
  /** Offset and length of the question's name in the query bytes (for copying into cached replies). */
  nameOffset: number;
  nameLength: number;
  /** Offset just after the question section. */
  questionEnd: number;
  /** EDNS0: undefined when the query has no OPT record. */
  edns?: { udpSize: number; version: number; dnssecOk: boolean };
}

/** A parsed query; the dotted name is only built when something asks for it (a cache miss). */
class Query implements ParsedQuery {
  private _name: string | undefined;
  private _lname: string | undefined;
  edns?: { udpSize: number; version: number; dnssecOk: boolean };
  constructor(
    private readonly buf: Buffer,
    public id: number,
    public flags: number,
    public opcode: number,
    public wireKey: string,
    public qtype: number,
    public qclass: number,
    public nameOffset: number,
    public nameLength: number,
    public questionEnd: number,
  ) {}

  get name(): string {
    if (this._name === undefined) {
      const labels: string[] = [];
      let off = this.nameOffset;
      for (let len = this.buf[off]!; len !== 0; len = this.buf[off]!) {
        labels.push(this.buf.toString('latin1', off + 1, off + 1 + len));
        off += 1 + len;
      }
      this._name = labels.join('.');
    }
    return this._name;
  }

  get lname(): string {
    return (this._lname ??= asciiLower(this.name));
  }
}

export type ParseResult =
  | { ok: true; query: ParsedQuery }
  /** id is undefined when the message is too short to answer at all. */
  | { ok: false; id: number | undefined; reason: string; opcode?: number; flags?: number };

/** Parses a query. Anything malformed returns a reason (the server answers FORMERR or drops). */
export function parseQuery(buf: Buffer): ParseResult {
  if (buf.length < 12) return { ok: false, id: undefined, reason: 'shorter than a DNS header' };
  const id = buf.readUInt16BE(0);
  const flags = buf.readUInt16BE(2);
  const opcode = (flags >> 11) & 0xf;
  if (flags & Flag.QR) return { ok: false, id: undefined, reason: 'a response, not a query' }; // never answer answers
  const qdcount = buf.readUInt16BE(4);
  const ancount = buf.readUInt16BE(6);
  const nscount = buf.readUInt16BE(8);
  const arcount = buf.readUInt16BE(10);
  if (qdcount !== 1) return { ok: false, id, reason: `${qdcount} questions`, opcode, flags };
  // walk the name: labels only (no compression pointer is valid in a question we parse first)
  let off = 12;
  let total = 0;
  for (;;) {
    if (off >= buf.length) return { ok: false, id, reason: 'question name runs past the end', opcode, flags };
    const len = buf[off]!;
    if (len === 0) {
      off++;
      break;
    }
    if (len > 63) return { ok: false, id, reason: 'bad label length or compression in question', opcode, flags };
    if (off + 1 + len > buf.length) return { ok: false, id, reason: 'question label runs past the end', opcode, flags };
    total += len + 1;
    if (total > 254) return { ok: false, id, reason: 'question name longer than 255 octets', opcode, flags };
    // a dot inside a label cannot be told apart from a label boundary in our dotted names
    for (let i = off + 1; i <= off + len; i++) {
      if (buf[i] === 0x2e) return { ok: false, id, reason: 'a label contains a dot', opcode, flags };
    }
    off += 1 + len;
  }
  if (off + 4 > buf.length) return { ok: false, id, reason: 'question type/class missing', opcode, flags };
  const qtype = buf.readUInt16BE(off);
  const qclass = buf.readUInt16BE(off + 2);
  const questionEnd = off + 4;
  const query = new Query(buf, id, flags, opcode, asciiLower(buf.toString('latin1', 12, off)), qtype, qclass, 12, off - 12, questionEnd);
  // EDNS0: look for the OPT record among the additional records (skipping any answer/authority RRs).
  if (arcount > 0) {
    let p = questionEnd;
    const rrs = ancount + nscount + arcount;
    for (let i = 0; i < rrs; i++) {
      const nameEnd = skipName(buf, p);
      if (nameEnd < 0 || nameEnd + 10 > buf.length) return { ok: false, id, reason: 'malformed resource record', opcode, flags };
      const type = buf.readUInt16BE(nameEnd);
      const rdlen = buf.readUInt16BE(nameEnd + 8);
      if (nameEnd + 10 + rdlen > buf.length) return { ok: false, id, reason: 'resource record runs past the end', opcode, flags };
      if (type === TYPE_OPT && i >= ancount + nscount) {
        if (query.edns) return { ok: false, id, reason: 'more than one OPT record', opcode, flags };
        const ttl = buf.readUInt32BE(nameEnd + 4);
        query.edns = { udpSize: buf.readUInt16BE(nameEnd + 2), version: (ttl >>> 16) & 0xff, dnssecOk: (ttl & 0x8000) !== 0 };
      }
      p = nameEnd + 10 + rdlen;
    }
  }
  return { ok: true, query };
}

function skipName(buf: Buffer, off: number): number {
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
