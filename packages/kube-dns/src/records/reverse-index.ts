// IP → the services whose records may name that IP, counted with multiplicity so that an address
// listed by several slices survives until the last one goes. The resolver turns candidates into
// PTR targets (and drops those no longer counted, e.g. not-ready endpoints).
//
// An owner is the object that stands for a service (the zone uses its current ServiceInfo), not a
// '<ns>/<name>' key: a key string per Service was 32 more bytes each at 100,000 Services.
// Nearly every IP has a single owner, so a value is the owner itself until a second one arrives:
// one Map entry and no array per cluster IP keeps 10k+ services cheap.

type Owners<O> = O | O[];

export class ReverseIndex<O extends object> {
  private readonly map = new Map<string, Owners<O>>();

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
      if (cur === owner) this.map.delete(ip);
      return;
    }
    const i = cur.indexOf(owner);
    if (i < 0) return;
    cur.splice(i, 1);
    if (cur.length === 1) this.map.set(ip, cur[0]!);
  }

  /** Distinct owners of an IP, in arrival order. */
  owners(ip: string): O[] {
    const cur = this.map.get(ip);
    if (cur === undefined) return [];
    if (!Array.isArray(cur)) return [cur];
    return [...new Set(cur)];
  }

  get size(): number {
    return this.map.size;
  }
}
