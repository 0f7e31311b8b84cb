// IP → the services ('<ns>/<name>') whose records may name that IP, counted with multiplicity so
// that an address listed by several slices survives until the last one goes. The resolver turns
// candidates into PTR targets (and drops those no longer counted, e.g. not-ready endpoints).
//
// Nearly every IP has a single owner, so a value is a bare string until a second one arrives:
// one Map entry and no array per cluster IP keeps 10k+ services cheap.

type Owners = string | string[];

export class ReverseIndex {
  private readonly map = new Map<string, Owners>();

  add(ip: string, owner: string): void {
    const cur = this.map.get(ip);
    if (cur === undefined) this.map.set(ip, owner);
    else if (typeof cur === 'string') this.map.set(ip, [cur, owner]);
    else cur.push(owner);
  }

  remove(ip: string, owner: string): void {
    const cur = this.map.get(ip);
    if (cur === undefined) return;
    if (typeof cur === 'string') {
      if (cur === owner) this.map.delete(ip);
      return;
    }
    const i = cur.indexOf(owner);
    if (i < 0) return;
    cur.splice(i, 1);
    if (cur.length === 1) this.map.set(ip, cur[0]!);
  }

  /** Distinct owners of an IP, in arrival order. */
  owners(ip: string): string[] {
    const cur = this.map.get(ip);
    if (cur === undefined) return [];
    if (typeof cur === 'string') return [cur];
    return [...new Set(cur)];
  }

  get size(): number {
    return this.map.size;
  }
}
