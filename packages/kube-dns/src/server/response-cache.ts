// Encoded replies keyed by (lower-cased name, type, class, EDNS/DO, transport class). A hit costs
// a buffer copy and a few writes: the query's ID, RD/CD bits and its spelling of the name.
// The map is keyed by the name's hash, which the parser computes while it reads the name
// (ParsedQuery.keyHash): a small integer, so a lookup builds no string for the name (a hit
// compares the question's bytes with the name in the entry's reply, kept A-Z folded) and, on a
// miss, reads no other name in its bucket. Most lookups
// miss: the search-path expansions a cluster sends are answered NXDOMAIN, never cached. The
// replies for the name's types and variants, and for any other name with the same hash, hang
// off that key in a short chain, each entry with its name; a chain is kept to MAX_CHAIN entries
// whatever clients ask. Before the map, a bit array of the hashes stored answers most misses
// from memory that stays in the CPU's caches (FILTER_BITS). Entries remember the zone dependency
// and its generation; a zone change to that dependency makes them miss (docs/hot-path.md).
//
// Bounded in entries and in bytes. Every reply is copied into memory of its own before it is
// kept: a small Buffer from allocUnsafe is a slice of Node's shared 8 KiB pool, and keeping one
// would keep the whole 8 KiB slab alive (measured: 8 MB of replies pinning 29 MB). The cost of an
// entry counts its bytes, its key and a fixed overhead for the objects around them.
//
// UDP replies are keyed by class, not by the client's exact EDNS size (one name, one entry): an
// entry built for limit L serves a client whose limit L' >= its size when nothing was left out to
// fit L (the same bytes would be built), and only the same L when something was: TC set, or
// additional records dropped (a headless service's SRV targets' addresses).
import { Buffer } from 'node:buffer';
import type { GenerationCell, ZoneReader } from '../records/types.js';
import type { ParsedQuery } from './wire.js';
import { Flag, NameMatch, copyBytes, foldName, matchFoldedName } from './wire.js';

interface Entry {
  /**
   * The entry's name is the question's in `bytes`, at 12, of this length, kept A-Z folded
   * (foldName); besides it the entry answers for qtype and variant (see variant()).
   */
  nameLength: number;
  qtype: number;
  variant: number;
  /** The next entry with the same key hash (another type or variant, or rarely another name). */
  next: Entry | undefined;
  /** The reply, its names folded at 12 and at every nameOffset. */
  bytes: Buffer;
  nameOffsets: readonly number[];
  dep: string;
  /** The dep's cell when it has one (ZoneReader.depCell): checked instead of depGeneration. */
  cell: GenerationCell | undefined;
  gen: number;
  /** The limit the reply was built for, and whether records were left out to fit it (Encoded.cut). */
  limit: number;
  cut: boolean;
  cost: number;
}

function chainLength(e: Entry | undefined): number {
  let n = 0;
  for (; e; e = e.next) n++;
  return n;
}

/** Where a reply has the question's name (after the 12-octet header): the entry's key. */
const QUESTION_NAME = 12;

/** The query's bits a hit takes over (RD, CD and the opcode), in the flags' high and low octet. */
const ASKER_FLAGS_HIGH = (Flag.RD | 0x7800) >>> 8;
const ASKER_FLAGS_LOW = Flag.CD;

/** Map entry, entry object, nameOffsets array, ArrayBuffer and Buffer headers: measured order of magnitude. */
const ENTRY_OVERHEAD = 320;

/**
 * Entries per key hash at most. One name has a few types and variants; more than this behind one
 * hash means colliding names, and a longer chain would make every lookup of them walk it.
 */
export const MAX_CHAIN = 16;

/**
 * The presence filter in front of the map: one bit per value of a key hash's low FILTER_BITS
 * bits, set when an entry is stored under that hash. Most lookups are for names never cached (the
 * search-path expansions, answered NXDOMAIN). For them a clear bit is the answer, read from one
 * 32 KiB array that stays in the CPU's caches, where the map's lookup would read a bucket and the
 * entries behind it from memory the query has not touched. A set bit proves nothing (another hash
 * with the same low bits, or an entry removed since): the map decides. Bits are never cleared one
 * by one; the filter is rebuilt from the map's keys after an eviction, and once as many keys have
 * left the map as are in it.
 */
const FILTER_BITS = 18;
const FILTER_WORD_MASK = (1 << (FILTER_BITS - 5)) - 1;

export class ResponseCache {
  private readonly map = new Map<number, Entry>();
  private readonly filter = new Int32Array(1 << (FILTER_BITS - 5));
  /** Keys deleted from the map since the filter was last rebuilt: its stale bits, at most. */
  private staleKeys = 0;
  private bytesUsed = 0;
  private count = 0;
  hits = 0;
  misses = 0;

  constructor(
    private readonly zone: ZoneReader,
    private readonly maxEntries = 20_000,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  /** Entries (replies) held. */
  get size(): number {
    return this.count;
  }

  /** What the entries cost, as counted against maxBytes. */
  get bytes(): number {
    return this.bytesUsed;
  }

  /** qclass, EDNS present / DO, UDP or TCP: one number. */
  private static variant(q: ParsedQuery, limit: number): number {
    return (q.qclass << 3) | ((q.edns ? (q.edns.dnssecOk ? 2 : 1) : 0) << 1) | (limit > 0xfffe ? 1 : 0);
  }

  /** How the question's name matched the entry find() returned last (NameMatch). */
  private matched: NameMatch = NameMatch.DIFFERENT;

  private find(query: Uint8Array, q: ParsedQuery, variant: number): Entry | undefined {
    let e = this.map.get(q.keyHash);
    for (; e; e = e.next) {
      if (e.qtype !== q.qtype || e.variant !== variant || e.nameLength !== q.nameLength) continue;
      this.matched = matchFoldedName(e.bytes, QUESTION_NAME, query, q.nameOffset, q.nameLength);
      if (this.matched !== NameMatch.DIFFERENT) return e;
    }
    return undefined;
  }

  /** A ready-to-send reply for this query, or undefined. */
  get(query: Buffer, q: ParsedQuery, limit: number): Buffer | undefined {
    const h = q.keyHash;
    if ((this.filter[(h >>> 5) & FILTER_WORD_MASK]! & (1 << (h & 31))) === 0) {
      this.misses++;
      return undefined;
    }
    const e = this.find(query, q, ResponseCache.variant(q, limit));
    if (!e || (e.cell ? e.cell.gen : this.zone.depGeneration(e.dep)) !== e.gen) {
      if (e) this.unlink(q.keyHash, e);
      this.misses++;
      return undefined;
    }
    if (e.bytes.length > limit || (e.cut && e.limit !== limit)) {
      this.misses++; // built for another size: the caller builds and stores this one
      return undefined;
    }
    this.hits++;
    const out = Buffer.allocUnsafe(e.bytes.length);
    out.set(e.bytes); // TypedArray's own copy: Buffer#copy checks its arguments in JavaScript first
    // the query's ID and its RD, CD and opcode bits, written byte by byte: Buffer's
    // writeUInt16BE checks its offset through a wrapped validator on every call (perf)
    const id = q.id;
    const flags = q.flags;
    out[0] = id >>> 8;
    out[1] = id & 0xff;
    out[2] = (out[2]! & ~ASKER_FLAGS_HIGH) | ((flags >>> 8) & ASKER_FLAGS_HIGH);
    out[3] = (out[3]! & ~ASKER_FLAGS_LOW) | (flags & ASKER_FLAGS_LOW);
    // the asker's spelling of the name wherever the reply has it, unless it is already the one
    // there: the entry keeps its names folded, so a question with no capital letter (most hits)
    // matched it octet for octet. Index loop and byte copy: no iterator, no Uint8Array view per
    // hit (copyBytes)
    if (this.matched === NameMatch.FOLDED) {
      const offsets = e.nameOffsets;
      for (let i = 0; i < offsets.length; i++) copyBytes(query, q.nameOffset, q.nameOffset + q.nameLength, out, offsets[i]!);
    }
    return out;
  }

  /**
   * `cell` and `gen`: the dependency's cell (if it has one) and generation, read in the same tick
   * as the resolution (the zone changes only between ticks).
   */
  set(query: Uint8Array, q: ParsedQuery, limit: number, bytes: Buffer, nameOffsets: readonly number[], dep: string, cell: GenerationCell | undefined, gen: number, cut: boolean): void {
    if (this.maxEntries <= 0 || this.maxBytes <= 0) return; // disabled
    // the question's name is the key, kept folded, and a hit writes the asker's spelling over
    // it: a reply whose question is not among the names to patch cannot be kept that way
    if (!nameOffsets.includes(QUESTION_NAME)) return;
    const hash = q.keyHash;
    const cost = bytes.length + dep.length + ENTRY_OVERHEAD;
    if (cost > this.maxBytes >> 4) return; // one huge reply (a big TCP answer) must not flush the rest
    const variant = ResponseCache.variant(q, limit);
    const old = this.find(query, q, variant);
    if (old) this.unlink(hash, old);
    // refused before any eviction: names piled on one hash must not flush the others' entries
    if (chainLength(this.map.get(hash)) >= MAX_CHAIN) return;
    if (this.count >= this.maxEntries || this.bytesUsed + cost > this.maxBytes) this.evict(cost);
    const head = this.map.get(hash);
    // memory of its own: never a slice of the shared pool (see above)
    const own = Buffer.allocUnsafeSlow(bytes.length);
    bytes.copy(own);
    for (let i = 0; i < nameOffsets.length; i++) foldName(own, nameOffsets[i]!, q.nameLength);
    this.map.set(hash, { nameLength: q.nameLength, qtype: q.qtype, variant, next: head, bytes: own, nameOffsets, dep, cell, gen, limit, cut, cost });
    this.filter[(hash >>> 5) & FILTER_WORD_MASK]! |= 1 << (hash & 31);
    this.count++;
    this.bytesUsed += cost;
  }

  clear(): void {
    this.map.clear();
    this.rebuildFilter();
    this.count = 0;
    this.bytesUsed = 0;
  }

  /** Takes one entry out of its name's chain. */
  private unlink(key: number, e: Entry): void {
    const head = this.map.get(key);
    if (head === e) {
      if (e.next) this.map.set(key, e.next);
      else {
        this.map.delete(key);
        if (++this.staleKeys > 1024 && this.staleKeys > this.map.size) this.rebuildFilter();
      }
    } else {
      let p = head;
      while (p && p.next !== e) p = p.next;
      if (p) p.next = e.next;
    }
    this.count--;
    this.bytesUsed -= e.cost;
  }

  /** Drops the oldest names (an eighth of the entries at once: amortised O(1); stale entries tend to be old), then more if bytes demand. */
  private evict(incoming: number): void {
    let n = Math.max(1, this.maxEntries >> 3);
    const byteTarget = this.maxBytes - Math.max(incoming, this.maxBytes >> 3);
    for (const [k, head] of this.map) {
      if (n <= 0 && this.bytesUsed <= byteTarget) break;
      this.map.delete(k);
      for (let e: Entry | undefined = head; e; e = e.next) {
        this.count--;
        this.bytesUsed -= e.cost;
        n--;
      }
    }
    this.rebuildFilter();
  }

  /** The filter from the map's keys alone (see FILTER_BITS). */
  private rebuildFilter(): void {
    const f = this.filter;
    f.fill(0);
    for (const h of this.map.keys()) f[(h >>> 5) & FILTER_WORD_MASK]! |= 1 << (h & 31);
    this.staleKeys = 0;
  }

  /** Memory the entries hold on to, counted from their backing stores (for tests and the bench). */
  retainedBytes(): number {
    const seen = new Set<ArrayBufferLike>();
    let n = 0;
    for (const head of this.map.values()) {
      for (let e: Entry | undefined = head; e; e = e.next) {
        if (seen.has(e.bytes.buffer)) continue;
        seen.add(e.bytes.buffer);
        n += e.bytes.buffer.byteLength;
      }
    }
    return n;
  }
}
