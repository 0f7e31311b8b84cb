// Which services and namespaces may exist, answered from a question's bytes: the index behind the
// negative answers decided before any string is built (resolve/absent.ts, docs/hot-path.md).
//
// A counting filter: one byte per slot, indexed by a seeded hash of the lower-cased labels
// (`<svc>` and `<ns>` for a service, `<ns>` alone for a namespace). A slot at zero proves the name
// absent; anything else proves nothing (another name with the same slot), and the caller asks the
// zone. It never says "absent" for a present name: a slot that reached 255 stays there until the
// next rebuild, and a rebuild recounts from the zone.

/**
 * Slots per service at least. A service takes a slot and shares its namespace's with the other
 * services there: with namespaces few, about one lookup of an absent name in eight finds a slot
 * taken by another (and asks the zone); 16 KiB at 2,000 Services, 1 MiB at 100,000.
 */
const SLOTS_PER_SERVICE = 8;
const MIN_SLOTS = 4096;
const SATURATED = 255;

/** One FNV-1a step. */
const FNV_PRIME = 0x01000193;

/** The lower-cased octet (A-Z folded, nothing else: RFC 4343, as the zone's lookups). */
function fold(b: number): number {
  return b >= 0x41 && b <= 0x5a ? b | 0x20 : b;
}

/** The final mix of a 32-bit hash, so that the low bits (the slot) depend on every octet. */
function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  return h ^ (h >>> 13);
}

export class PresenceIndex {
  private counts: Uint8Array;
  private mask: number;
  /** Services counted. */
  private services = 0;
  /** Removals since the last rebuild: saturated slots only go back to their count by a rebuild. */
  private removals = 0;
  // Per process and random: the names are chosen by clients, who could otherwise pick ones that
  // all land on taken slots and send every question down the long path.
  private readonly serviceSeed = (Math.random() * 0x100000000) >>> 0;
  private readonly namespaceSeed = (Math.random() * 0x100000000) >>> 0;

  /** `all` lists every (namespace, service) of the zone: what a rebuild counts again. */
  constructor(private readonly all: () => Iterable<readonly [string, string]>) {
    this.counts = new Uint8Array(MIN_SLOTS);
    this.mask = MIN_SLOTS - 1;
  }

  /** A service appeared (not called for a change to an existing one). */
  add(namespace: string, name: string): void {
    this.services++;
    if (this.services * SLOTS_PER_SERVICE > this.counts.length) {
      this.rebuild(); // counts the new service too: all() already lists it
      return;
    }
    this.bump(this.serviceSlot(namespace, name), 1);
    this.bump(this.namespaceSlot(namespace), 1);
  }

  /** A service went away. */
  remove(namespace: string, name: string): void {
    this.services--;
    this.bump(this.serviceSlot(namespace, name), -1);
    this.bump(this.namespaceSlot(namespace), -1);
    // amortised O(1): a rebuild counts the services left, after as many removals as there are of them
    if (++this.removals > Math.max(this.services, 64)) this.rebuild();
  }

  /** False only when no service `<svc>` exists in namespace `<ns>`; both labels given by offset and length in buf. */
  mayHaveService(buf: Uint8Array, svcOff: number, svcLen: number, nsOff: number, nsLen: number): boolean {
    let h = this.serviceSeed;
    for (let i = svcOff; i < svcOff + svcLen; i++) h = Math.imul(h ^ fold(buf[i]!), FNV_PRIME);
    h = Math.imul(h ^ 0x2e, FNV_PRIME);
    for (let i = nsOff; i < nsOff + nsLen; i++) h = Math.imul(h ^ fold(buf[i]!), FNV_PRIME);
    return this.counts[finish(h) & this.mask] !== 0;
  }

  /** False only when namespace `<ns>` has no service. */
  mayHaveNamespace(buf: Uint8Array, nsOff: number, nsLen: number): boolean {
    let h = this.namespaceSeed;
    for (let i = nsOff; i < nsOff + nsLen; i++) h = Math.imul(h ^ fold(buf[i]!), FNV_PRIME);
    return this.counts[finish(h) & this.mask] !== 0;
  }

  /** Bytes held (for the zone's memory figures). */
  get bytes(): number {
    return this.counts.length;
  }

  // The zone's own names are hashed from their strings, one char per octet (latin1, as the
  // question's names are read): the same value as the question's bytes give for the same name.
  private serviceSlot(namespace: string, name: string): number {
    let h = this.serviceSeed;
    for (let i = 0; i < name.length; i++) h = Math.imul(h ^ fold(name.charCodeAt(i) & 0xff), FNV_PRIME);
    h = Math.imul(h ^ 0x2e, FNV_PRIME);
    for (let i = 0; i < namespace.length; i++) h = Math.imul(h ^ fold(namespace.charCodeAt(i) & 0xff), FNV_PRIME);
    return finish(h) & this.mask;
  }

  private namespaceSlot(namespace: string): number {
    let h = this.namespaceSeed;
    for (let i = 0; i < namespace.length; i++) h = Math.imul(h ^ fold(namespace.charCodeAt(i) & 0xff), FNV_PRIME);
    return finish(h) & this.mask;
  }

  private bump(slot: number, by: 1 | -1): void {
    const c = this.counts[slot]!;
    if (c !== SATURATED) this.counts[slot] = c + by;
  }

  /** Counts every service again, in a table sized for them (larger or smaller than before). */
  private rebuild(): void {
    let size = MIN_SLOTS;
    while (size < this.services * SLOTS_PER_SERVICE) size *= 2;
    this.counts = size === this.counts.length ? (this.counts.fill(0), this.counts) : new Uint8Array(size);
    this.mask = size - 1;
    this.removals = 0;
    let n = 0;
    for (const [namespace, name] of this.all()) {
      this.bump(this.serviceSlot(namespace, name), 1);
      this.bump(this.namespaceSlot(namespace), 1);
      n++;
    }
    this.services = n;
  }
}
