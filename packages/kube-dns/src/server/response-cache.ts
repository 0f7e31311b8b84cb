// Encoded replies keyed by (lower-cased name, type, class, EDNS/DO, size limit). A hit costs a
// buffer copy and a few writes: the query's ID, RD/CD bits and its spelling of the name. Entries
// remember the zone dependency and its generation; a zone change to that dependency makes them
// miss (DESIGN.md §5).
import type { ZoneReader } from '../records/types.js';
import type { ParsedQuery } from './wire.js';
import { Flag } from './wire.js';

interface Entry {
  bytes: Buffer;
  nameOffsets: number[];
  dep: string;
  gen: number;
}

export class ResponseCache {
  private readonly map = new Map<string, Entry>();
  hits = 0;
  misses = 0;

  constructor(
    private readonly zone: ZoneReader,
    private readonly maxEntries = 20_000,
  ) {}

  get size(): number {
    return this.map.size;
  }

  static key(q: ParsedQuery, limit: number): string {
    return `${q.wireKey}|${q.qtype}|${q.qclass}|${q.edns ? (q.edns.dnssecOk ? 2 : 1) : 0}|${limit}`;
  }

  /** A ready-to-send reply for this query, or undefined. */
  get(key: string, query: Buffer, q: ParsedQuery): Buffer | undefined {
    const e = this.map.get(key);
    if (!e || this.zone.depGeneration(e.dep) !== e.gen) {
      if (e) this.map.delete(key);
      this.misses++;
      return undefined;
    }
    this.hits++;
    const out = Buffer.allocUnsafe(e.bytes.length);
    e.bytes.copy(out);
    out.writeUInt16BE(q.id, 0);
    const keep = out.readUInt16BE(2) & ~(Flag.RD | Flag.CD | 0x7800);
    out.writeUInt16BE(keep | (q.flags & (Flag.RD | Flag.CD | 0x7800)), 2);
    for (const off of e.nameOffsets) query.copy(out, off, q.nameOffset, q.nameOffset + q.nameLength);
    return out;
  }

  /** `gen`: the dependency's generation read in the same tick as the resolution (the zone changes only between ticks). */
  set(key: string, bytes: Buffer, nameOffsets: number[], dep: string, gen: number): void {
    if (this.maxEntries <= 0) return; // disabled
    if (this.map.size >= this.maxEntries) {
      // drop the oldest eighth at once: amortised O(1), and stale entries tend to be old
      let n = this.maxEntries >> 3;
      for (const k of this.map.keys()) {
        this.map.delete(k);
        if (--n <= 0) break;
      }
    }
    this.map.set(key, { bytes, nameOffsets, dep, gen });
  }

  clear(): void {
    this.map.clear();
  }
}
