// Round-robin: the answer section's runs of A, AAAA or SRV records of one owner name (a headless
// service's pods, a service's ports) are rotated by a counter of the question's name on every
// reply, cached or freshly encoded, so that clients taking the first record spread over the pods.
// One counter per name and type, not one for all: with a shared counter a client that looked up
// two 2-pod services in turn got the same first pod of each every time (each name saw every other
// turn); with one per name, a resolver asking A and AAAA of a dual-stack service moved it by two
// each lookup, and the A answer of 2 pods never turned. The counters sit in a fixed table indexed
// by turnKey (the name's hash, the response cache's key seeded per process, mixed with the type):
// questions that share a slot share a counter, as all names once did. It works on
// the encoded bytes, in place: no decode, no re-encode, no allocation, and nothing at all for
// replies with fewer than two answers. Measured on a loaded 2-core machine: a few hundred ns for
// 3 A records, about 1 us for 3 SRV records (a cache hit's copy is ~100-200 ns; a whole UDP query
// through Node costs tens of us).
//
// Moving records moves the bytes that compression pointers may aim at. A pointer from outside the
// run into a moved record is re-aimed by that record's displacement; a pointer from inside the run
// into the run (never produced by our encoder) would turn into a forward pointer, so such a run
// is left as it is. Anything we cannot walk is left as it is too: rotation is best effort and
// never breaks a reply.
import { Buffer } from 'node:buffer';

const TYPE_A = 1;
const TYPE_NS = 2;
const TYPE_CNAME = 5;
const TYPE_SOA = 6;
const TYPE_PTR = 12;
const TYPE_MX = 15;
const TYPE_AAAA = 28;
const TYPE_SRV = 33;

/** Turn counters by the question's key hash (a power of two: the index is a mask). */
export const TURNS = 4096;
const turns = new Uint32Array(TURNS);

// Scratch space reused by every call (the walk is synchronous): no allocation per reply. A
// 65,535-byte message holds at most 65535 / 11 records and 65535 / 2 pointers.
const scratch = new Uint8Array(65535);
const recStart = new Int32Array(6000);
const recOwnerEnd = new Int32Array(6000);
const recType = new Int32Array(6000);
const recEnd = new Int32Array(6000);
const ptrs = new Int32Array(32768);
const fixAt = new Int32Array(32768);
const fixTo = new Int32Array(32768);
let nPtrs = 0;
let nRecs = 0;

/** Big-endian 16 bits; the caller has checked the bounds (cheaper than Buffer#readUInt16BE here). */
const u16 = (b: Buffer, o: number): number => (b[o]! << 8) | b[o + 1]!;

/** Offset after the name at `off`, or -1 if malformed; pointer offsets go to `ptrs`. */
function skipName(msg: Buffer, off: number): number {
  for (let guard = 0; guard < 128; guard++) {
    if (off >= msg.length) return -1;
    const len = msg[off]!;
    if (len === 0) return off + 1;
    if ((len & 0xc0) === 0xc0) {
      if (off + 2 > msg.length) return -1;
      ptrs[nPtrs++] = off;
      return off + 2;
    }
    if ((len & 0xc0) !== 0) return -1;
    off += 1 + len;
  }
  return -1;
}

/** The names inside RDATA that may be compressed (RFC 1035 types, MX and SRV as commonly done); false if malformed. */
function rdataNames(msg: Buffer, type: number, rd: number, end: number): boolean {
  let e: number;
  switch (type) {
    case TYPE_NS:
    case TYPE_CNAME:
    case TYPE_PTR:
      e = skipName(msg, rd);
      break;
    case TYPE_MX:
      e = skipName(msg, rd + 2);
      break;
    case TYPE_SRV:
      e = skipName(msg, rd + 6);
      break;
    case TYPE_SOA:
      e = skipName(msg, rd);
      if (e >= 0) e = skipName(msg, e);
      break;
    default:
      return true;
  }
  return e >= 0 && e <= end;
}

/** Fills the record and pointer tables for the whole message; false if it cannot be walked. */
function walk(msg: Buffer): boolean {
  nPtrs = 0;
  nRecs = 0;
  const qd = u16(msg, 4);
  const total = u16(msg, 6) + u16(msg, 8) + u16(msg, 10);
  if (total > recStart.length) return false;
  let off = 12;
  for (let i = 0; i < qd; i++) {
    off = skipName(msg, off);
    if (off < 0) return false;
    off += 4;
  }
  for (let i = 0; i < total; i++) {
    const start = off;
    const ownerEnd = skipName(msg, off);
    if (ownerEnd < 0 || ownerEnd + 10 > msg.length) return false;
    const type = u16(msg, ownerEnd);
    const rd = ownerEnd + 10;
    const end = rd + u16(msg, ownerEnd + 8);
    if (end > msg.length || !rdataNames(msg, type, rd, end)) return false;
    recStart[nRecs] = start;
    recOwnerEnd[nRecs] = ownerEnd;
    recType[nRecs] = type;
    recEnd[nRecs] = end;
    nRecs++;
    off = end;
  }
  return true;
}

/** Same owner name as written (usually the same 2-byte pointer), type and class. */
function sameRun(msg: Buffer, a: number, b: number): boolean {
  if (recType[a] !== recType[b]) return false;
  const sa = recStart[a]!;
  const sb = recStart[b]!;
  const len = recOwnerEnd[a]! - sa + 4;
  if (len !== recOwnerEnd[b]! - sb + 4) return false;
  for (let i = 0; i < len; i++) if (msg[sa + i] !== msg[sb + i]) return false;
  return true;
}

/** Rotates records [first, first+n) left by k; false (message untouched) when pointers forbid it. */
function rotateRun(msg: Buffer, first: number, n: number, k: number): boolean {
  const runStart = recStart[first]!;
  const runEnd = recEnd[first + n - 1]!;
  const pivot = recStart[first + k]!;
  let nFix = 0;
  for (let j = 0; j < nPtrs; j++) {
    const p = ptrs[j]!;
    const target = u16(msg, p) & 0x3fff;
    if (target < runStart || target >= runEnd) continue;
    if (p >= runStart && p < runEnd) return false;
    // records from the pivot on move to the front, the ones before it go behind them
    const moved = target >= pivot ? target - pivot + runStart : target + runEnd - pivot;
    if (moved > 0x3fff) return false;
    fixAt[nFix] = p;
    fixTo[nFix++] = moved;
  }
  // the records before the pivot aside, the rest slid to the front (memmove), the first behind them
  const head = pivot - runStart;
  for (let j = 0; j < head; j++) scratch[j] = msg[runStart + j]!;
  msg.copyWithin(runStart, pivot, runEnd);
  const tail = runEnd - head;
  for (let j = 0; j < head; j++) msg[tail + j] = scratch[j]!;
  for (let j = 0; j < nFix; j++) msg.writeUInt16BE(0xc000 | fixTo[j]!, fixAt[j]!);
  return true;
}

/** The counter of a question: its name's hash (Query.keyHash) with its type mixed in. */
export function turnKey(q: { keyHash: number; qtype: number }): number {
  return (q.keyHash + Math.imul(q.qtype, 0x9e3779b1)) >>> 0;
}

/**
 * Rotates, in place, each run of two or more A/AAAA/SRV answers sharing owner name and class, by
 * the turn of the question (`key`: turnKey). Returns `msg` (for a one-line hook). Never throws.
 */
export function rotateAnswers(msg: Buffer, key = 0): Buffer {
  if (msg.length < 12 || u16(msg, 6) < 2) return msg;
  const slot = key & (TURNS - 1);
  const turn = turns[slot]!;
  turns[slot] = (turn + 1) & 0x3fffffff;
  const an = u16(msg, 6);
  let i = 0;
  // every write happens after a complete walk, so a message we cannot walk is sent as it is
  while (i < an && walk(msg) && nRecs >= an) {
    let rotated = false;
    while (i < an && !rotated) {
      const t = recType[i];
      let n = 1;
      if (t === TYPE_A || t === TYPE_AAAA || t === TYPE_SRV) while (i + n < an && sameRun(msg, i, i + n)) n++;
      const k = turn % n;
      rotated = n >= 2 && k !== 0 && rotateRun(msg, i, n, k);
      i += n;
    }
    // a rotation moved records and pointers: the next run needs a fresh walk
    if (!rotated) break;
  }
  return msg;
}

/** For tests: every name's next turn. */
export function resetRotation(to = 0): void {
  turns.fill(to);
}
