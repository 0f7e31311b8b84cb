// Which services and namespaces may exist, answered from a question's bytes: the index behind the
// negative answers decided before any string is built (resolve/absent.ts, docs/hot-path.md).
//
// A counting filter: one byte per slot, indexed by a seeded hash of the lower-cased labels
// (`<svc>` and `<ns>` for a service, `<ns>` alone for a namespace). A slot at zero proves the name
// absent; anything else proves nothing (another name with the same slot), and the caller asks the
// zone. It never says "absent" for a present name: a slot that reached 255 stays there until the
// next rebuild, and a rebuild recounts from the zone.

import { foldOctet } from './names.js';

/**
 * Slots per service at least. A service takes a slot and shares its namespace's with the other
 * services there: with namespaces few, about one lookup of an absent name in eight finds a slot
 * taken by another (and asks the zone); 16 KiB at 2,000 Services, 1 MiB at 100,000.
 */
const SLOTS_PER_SERVICE = 8;
const MIN_SLOTS = 4096;
const SATURATED = 255;

/** FNV-1a's 32-bit prime. */
const FNV_PRIME = 0x01000193;

/** FNV-1a from h over buf[off, off + len), A-Z folded: a label of the question. */
function octets(h: number, buf: Uint8Array, off: number, len: number): number {
  for (let i = off; i < off + len; i++) h = Math.imul(h ^ foldOctet(buf[i]!), FNV_PRIME);
  return h;
}

/**
 * The same over a name of the zone, one char per octet (latin1, as the question's names are
 * read): the same value as the question's bytes give for the same name.
 */
function chars(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ foldOctet(s.charCodeAt(i) & 0xff), FNV_PRIME);
  return h;
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
  /** Removals since the last rebuild: saturated slots only go back to their count by a rebuild. */
  private removals = 0;
  // Per process and random: the names are chosen by clients, who could otherwise pick ones that
  // all land on taken slots and send every question down the long path.
  private readonly serviceSeed = (Math.random() * 0x100000000) >>> 0;
  private readonly namespaceSeed = (Math.random() * 0x100000000) >>> 0;

  /**
   * `all` lists every (namespace, service) of the zone: what a rebuild counts again; `count` is
   * how many there are, already including one being added and no longer one being removed.
   */
  constructor(
    private readonly all: () => Iterable<readonly [string, string]>,
    private readonly count: () => number,
  ) {
    this.counts = new Uint8Array(MIN_SLOTS);
    this.mask = MIN_SLOTS - 1;
  }

  /** A service appeared (not called for a change to an existing one). */
  add(namespace: string, name: string): void {
    if (this.count() * SLOTS_PER_SERVICE > this.counts.length) {
      this.rebuild(); // counts the new service too: all() already lists it
      return;
    }
    this.bump(this.serviceSlot(namespace, name), 1);
    this.bump(this.namespaceSlot(namespace), 1);
  }

  /** A service went away. */
  remove(namespace: string, name: string): void {
    this.bump(this.serviceSlot(namespace, name), -1);
    this.bump(this.namespaceSlot(namespace), -1);
    // amortised O(1): a rebuild counts the services left, after as many removals as there are of them
    if (++this.removals > Math.max(this.count(), 64)) this.rebuild();
  }

  /** False only when no service `<svc>` exists in namespace `<ns>`; both labels given by offset and length in buf. */
  mayHaveService(buf: Uint8Array, svcOff: number, svcLen: number, nsOff: number, nsLen: number): boolean {
    const h = octets(Math.imul(octets(this.serviceSeed, buf, svcOff, svcLen) ^ 0x2e, FNV_PRIME), buf, nsOff, nsLen);
    return this.counts[finish(h) & this.mask] !== 0;
  }

  /** False only when namespace `<ns>` has no service. */
  mayHaveNamespace(buf: Uint8Array, nsOff: number, nsLen: number): boolean {
    return this.counts[finish(octets(this.namespaceSeed, buf, nsOff, nsLen)) & this.mask] !== 0;
  }

  /** Bytes held (for the zone's memory figures). */
  get bytes(): number {
    return this.counts.length;
  }

  private serviceSlot(namespace: string, name: string): number {
    return finish(chars(Math.imul(chars(this.serviceSeed, name) ^ 0x2e, FNV_PRIME), namespace)) & this.mask;
  }

  private namespaceSlot(namespace: string): number {
    return finish(chars(this.namespaceSeed, namespace)) & this.mask;
  }

  private bump(slot: number, by: 1 | -1): void {
    const c = this.counts[slot]!;
    if (c !== SATURATED) this.counts[slot] = c + by;
  }

  /** Counts every service again, in a table sized for them (larger or smaller than before). */
  private rebuild(): void {
    let size = MIN_SLOTS;
    while (size < this.count() * SLOTS_PER_SERVICE) size *= 2;
    this.counts = size === this.counts.length ? (this.counts.fill(0), this.counts) : new Uint8Array(size);
    this.mask = size - 1;
    this.removals = 0;
    for (const [namespace, name] of this.all()) {
      this.bump(this.serviceSlot(namespace, name), 1);
      this.bump(this.namespaceSlot(namespace), 1);
    }
  }
}
