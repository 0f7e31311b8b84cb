// Per-dependency generations for the response cache (see ZoneReader in types.ts), for the deps
// no live object holds: a live service keeps its generation itself (ServiceEntry.gen), so this
// holds deleted services, slices whose service has not arrived, and the wildcards' deps.
//
// Every bump stamps the key with the zone's global generation, so a key's value only grows and is
// never reused by another key's history. A deleted service leaves a tombstone (its last stamp);
// tombstones are purged in bulk when there are many of them (unique names churning), and from then
// on unknown keys report `floor`, the global generation at the purge: higher than any stamp a
// cached answer may hold for a purged key, so nothing stale revives. The price of a purge is a
// spurious miss for cached negative answers of never-seen names.

export class DepGenerations {
  private readonly stamps = new Map<string, number>();
  private readonly tombstones = new Set<string>();
  private floor = 0;

  constructor(private readonly maxTombstones = 10_000) {}

  get(key: string): number {
    return this.stamps.get(key) ?? this.floor;
  }

  /** Records a change of a live key at global generation `gen`. */
  bump(key: string, gen: number): void {
    this.stamps.set(key, gen);
    this.tombstones.delete(key);
  }

  /** The key's generation is held elsewhere from now on (a live service): nothing kept here. */
  forget(key: string): void {
    this.stamps.delete(key);
    this.tombstones.delete(key);
  }

  /** Records that a key no longer exists (its answers changed at `gen`). */
  bury(key: string, gen: number): void {
    this.stamps.set(key, gen);
    this.tombstones.add(key);
    if (this.tombstones.size > this.maxTombstones) {
      for (const k of this.tombstones) this.stamps.delete(k);
      this.tombstones.clear();
      this.floor = gen;
    }
  }

  get tombstoneCount(): number {
    return this.tombstones.size;
  }
}
