// The searches autopath left to the pod: per client IP and base, the walks whose reply was not a
// CNAME (plain NXDOMAIN or NODATA), so the pod's resolver goes on down its search path itself. A
// later name of that search can look like a first expansion (`redis.N` from a pod of N:
// `redis.N.svc.<zone>`), and completing it would answer for another name than the pod asked.
// Only a resolver's own sequence for one lookup needs it, which is quick: entries expire after
// TTL_MS. An entry dropped early lets that one search be completed wrongly again; one kept too
// long costs only a plain answer (what the pod gets without autopath).

/** Long enough for one lookup's search, even if a name in between waited out glibc's 5 s timeout. */
export const TTL_MS = 10_000;
/**
 * Memory bound. A key is the client IP (≤ 39 chars) and a base (≤ 253): at most MAX_CHARS chars
 * in all, one byte each (V8 keeps ASCII strings one byte a char), plus about 150 bytes of string
 * header, Map and Set slots and expiry per entry: under 2 MiB + 16384 × 150 B ≈ 4.4 MiB. Only walks of
 * names whose later search names look like first expansions are kept (see Autopath), so this
 * holds about 1,600 such failed lookups a second before an entry is dropped before it expires.
 */
export const MAX_ENTRIES = 16_384;
export const MAX_CHARS = 2 * 1024 * 1024;
/**
 * One client's share: a pod that fails 100 such lookups a second drops its own oldest entries,
 * not the other pods' (with a single bound, one busy pod would push every other pod's searches
 * out, and those would be completed wrongly again).
 */
export const MAX_PER_CLIENT = 1024;

export class SearchMemory {
  /** key → expiry (ms). Insertion order is expiry order (one TTL), so the oldest goes first. */
  private readonly entries = new Map<string, number>();
  /** client IP → its keys, oldest first (a Set keeps insertion order). */
  private readonly byClient = new Map<string, Set<string>>();
  private chars = 0;

  constructor(private readonly limits = { ttlMs: TTL_MS, maxEntries: MAX_ENTRIES, maxChars: MAX_CHARS, maxPerClient: MAX_PER_CLIENT }) {}

  remember(ip: string, base: string, now: number): void {
    const key = `${ip} ${base}`;
    // refreshed: to the back of the line. Dropped before the client's set is fetched: dropping its
    // only key deletes that set (a resolver asks A and AAAA, so most keys are remembered twice)
    if (this.entries.has(key)) this.drop(key);
    let mine = this.byClient.get(ip);
    if (!mine) this.byClient.set(ip, (mine = new Set()));
    this.entries.set(key, now + this.limits.ttlMs);
    mine.add(key);
    this.chars += key.length;
    if (mine.size > this.limits.maxPerClient) this.drop(mine.values().next().value!);
    for (const [k, expiry] of this.entries) {
      if (expiry > now && this.entries.size <= this.limits.maxEntries && this.chars <= this.limits.maxChars) break;
      this.drop(k);
    }
  }

  has(ip: string, base: string, now: number): boolean {
    const expiry = this.entries.get(`${ip} ${base}`);
    return expiry !== undefined && expiry > now;
  }

  get size(): number {
    return this.entries.size;
  }

  get keyChars(): number {
    return this.chars;
  }

  /** Clients with an entry. */
  get clients(): number {
    return this.byClient.size;
  }

  private drop(key: string): void {
    this.entries.delete(key);
    this.chars -= key.length;
    const ip = key.slice(0, key.indexOf(' '));
    const mine = this.byClient.get(ip)!;
    mine.delete(key);
    if (mine.size === 0) this.byClient.delete(ip);
  }
}
