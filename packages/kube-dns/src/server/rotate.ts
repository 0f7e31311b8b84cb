// Round-robin: the answer section's runs of A, AAAA or SRV records of one owner name (a headless
// service's pods, a service's ports) are rotated by a per-process counter on every reply, cached
// or freshly encoded, so that clients taking the first record spread over the pods. It works on
// the encoded bytes, in place, so a response-cache hit stays a copy plus a few writes: no decode,
// no re-encode, and nothing at all for replies with fewer than two answers.
//
// Moving records moves the bytes that compression pointers may aim at. A pointer from outside the
// run into a moved record is re-aimed by that record's displacement; a pointer from inside the run
// into the run (never produced by our encoder) would turn into a forward pointer, so such a run
// is left as it is. Anything we cannot walk is left as it is too: rotation is best effort and
// never breaks a reply.

const TYPE_A = 1;
const TYPE_NS = 2;
const TYPE_CNAME = 5;
const TYPE_SOA = 6;
const TYPE_PTR = 12;
const TYPE_MX = 15;
const TYPE_AAAA = 28;
const TYPE_SRV = 33;

let counter = 0;
const scratch = Buffer.allocUnsafe(65535);

/** One resource record's layout in the message. */
interface Rec {
  start: number;
  ownerEnd: number;
  type: number;
  end: number;
}

class Malformed extends Error {}

/** Offset after the name at `off`; each compression pointer's offset is pushed to `ptrs`. */
function skipName(msg: Buffer, off: number, ptrs: number[]): number {
  for (let guard = 0; guard < 128; guard++) {
    if (off >= msg.length) throw new Malformed();
    const len = msg[off]!;
    if (len === 0) return off + 1;
    if ((len & 0xc0) === 0xc0) {
      if (off + 2 > msg.length) throw new Malformed();
      ptrs.push(off);
      return off + 2;
    }
    if ((len & 0xc0) !== 0) throw new Malformed();
    off += 1 + len;
  }
  throw new Malformed();
}

/** The names inside RDATA that RFC 1035 (and common practice) allows to be compressed. */
function rdataNames(msg: Buffer, type: number, rd: number, end: number, ptrs: number[]): void {
  switch (type) {
    case TYPE_NS:
    case TYPE_CNAME:
    case TYPE_PTR:
      skipName(msg, rd, ptrs);
      return;
    case TYPE_MX:
      skipName(msg, rd + 2, ptrs);
      return;
    case TYPE_SRV:
      skipName(msg, rd + 6, ptrs);
      return;
    case TYPE_SOA:
      skipName(msg, skipName(msg, rd, ptrs), ptrs);
      return;
  }
  void end;
}

/** Every record of every section, and every compression pointer in the message. */
function walk(msg: Buffer, ptrs: number[]): Rec[] {
  const qd = msg.readUInt16BE(4);
  const total = msg.readUInt16BE(6) + msg.readUInt16BE(8) + msg.readUInt16BE(10);
  let off = 12;
  for (let i = 0; i < qd; i++) off = skipName(msg, off, ptrs) + 4;
  const recs: Rec[] = [];
  for (let i = 0; i < total; i++) {
    const start = off;
    const ownerEnd = skipName(msg, off, ptrs);
    if (ownerEnd + 10 > msg.length) throw new Malformed();
    const type = msg.readUInt16BE(ownerEnd);
    const rd = ownerEnd + 10;
    const end = rd + msg.readUInt16BE(ownerEnd + 8);
    if (end > msg.length) throw new Malformed();
    rdataNames(msg, type, rd, end, ptrs);
    recs.push({ start, ownerEnd, type, end });
    off = end;
  }
  return recs;
}

function sameOwnerAndType(msg: Buffer, a: Rec, b: Rec): boolean {
  if (a.type !== b.type) return false;
  const la = a.ownerEnd - a.start;
  if (la !== b.ownerEnd - b.start) return false;
  // owner (as written: usually the same 2-byte pointer) plus type and class
  return msg.compare(msg, b.start, b.ownerEnd + 4, a.start, a.ownerEnd + 4) === 0;
}

/** Rotates answers[first..first+n) left by k; false (message untouched) when pointers forbid it. */
function rotateRun(msg: Buffer, recs: Rec[], ptrs: number[], first: number, n: number, k: number): boolean {
  const runStart = recs[first]!.start;
  const runEnd = recs[first + n - 1]!.end;
  const pivot = recs[first + k]!.start;
  // displacement of record i: records from the pivot move to the front, the others behind them
  const delta = (i: number): number => (i >= first + k ? runStart - pivot : runEnd - pivot);
  const recAt = (off: number): number => {
    let i = first;
    while (recs[i]!.end <= off) i++;
    return i;
  };
  const fix: number[] = []; // pairs: pointer offset, new target
  for (const p of ptrs) {
    const target = msg.readUInt16BE(p) & 0x3fff;
    if (target < runStart || target >= runEnd) continue;
    if (p >= runStart && p < runEnd) return false;
    const moved = target + delta(recAt(target));
    if (moved > 0x3fff) return false;
    fix.push(p, moved);
  }
  msg.copy(scratch, 0, pivot, runEnd);
  msg.copy(scratch, runEnd - pivot, runStart, pivot);
  scratch.copy(msg, runStart, 0, runEnd - runStart);
  for (let i = 0; i < fix.length; i += 2) msg.writeUInt16BE(0xc000 | fix[i + 1]!, fix[i]!);
  return true;
}

/**
 * Rotates, in place, each run of two or more A/AAAA/SRV answers sharing owner name and class.
 * Returns `msg` (for a one-line hook). Never throws.
 */
export function rotateAnswers(msg: Buffer): Buffer {
  if (msg.length < 12 || msg.readUInt16BE(6) < 2) return msg;
  const turn = counter;
  counter = (counter + 1) % 0x40000000;
  try {
    const an = msg.readUInt16BE(6);
    let i = 0;
    while (i < an) {
      // walk again after each rotation: record and pointer offsets have changed
      const ptrs: number[] = [];
      const recs = walk(msg, ptrs);
      if (recs.length < an) return msg;
      for (; i < an; i++) {
        const t = recs[i]!.type;
        if (t !== TYPE_A && t !== TYPE_AAAA && t !== TYPE_SRV) continue;
        let n = 1;
        while (i + n < an && sameOwnerAndType(msg, recs[i]!, recs[i + n]!)) n++;
        const first = i;
        i += n;
        const k = turn % n;
        if (n >= 2 && k !== 0 && rotateRun(msg, recs, ptrs, first, n, k)) break;
      }
    }
  } catch {
    // Malformed (or a bounds error on a record we misjudged): every write happens only after the
    // whole message was walked, so the reply is intact; send it unrotated.
  }
  return msg;
}

/** For tests: the counter's next value. */
export function resetRotation(to = 0): void {
  counter = to;
}
