// IP → the services whose records may name that IP, counted with multiplicity so that an address
// listed by several slices survives until the last one goes. The resolver turns candidates into
// PTR targets (and drops those no longer counted, e.g. not-ready endpoints).
//
// An owner is the object that stands for a service (the zone uses a ServiceInfo of it), not a
// '<ns>/<name>' key: a key string per Service was 32 more bytes each at 100,000 Services. Two
// owners may stand for the same service (the zone keeps a headless service's entries across a
// change of its Service object, each owned by the info it was indexed with): `same` says so, for
// removal and for the distinct owners.
// Nearly every IP has a single owner, so a value is the owner itself until a second one arrives:
// one Map entry and no array per cluster IP keeps 10k+ services cheap.

type Owners<O> = O | O[];

export class ReverseIndex<O extends object> {
  private readonly map = new Map<string, Owners<O>>();

  constructor(private readonly same: (a: O, b: O) => boolean = Object.is) {}

  add(ip: string, owner: O): void {
    const cur = this.map.get(ip);
    if (cur === undefined) this.map.set(ip, owner);
    else if (!Array.isArray(cur)) this.map.set(ip, [cur, owner]);
    else cur.push(owner);
  }

  remove(ip: string, owner: O): void {
    const cur = this.map.get(ip);
    if (cur === undefined) return;
    if (!Array.isArray(cur)) {
      if (this.same(cur, owner)) this.map.delete(ip);
      return;
    }
    const i = cur.findIndex((x) => this.same(x, owner));
    if (i < 0) return;
    cur.splice(i, 1);
    if (cur.length === 1) this.map.set(ip, cur[0]!);
  }

  /** Distinct owners of an IP (the first of those that are the same), in arrival order. */
  owners(ip: string): O[] {
    const cur = this.map.get(ip);
    if (cur === undefined) return [];
    if (!Array.isArray(cur)) return [cur];
    return cur.filter((x, i) => cur.findIndex((y) => this.same(x, y)) === i);
  }

  get size(): number {
    return this.map.size;
  }
}
