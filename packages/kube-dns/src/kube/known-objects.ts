// What a reflector remembers of each object it has applied: its resourceVersion, by namespace and
// name. Nothing else is kept of an API object (memory stays flat with cluster size), and even this
// is stored compactly, because there is one entry per Service, EndpointSlice and Pod:
//  - by namespace, then name: the name is the string the zone's record keeps anyway, where a
//    joined '<ns>/<name>' key was a string of its own per object;
//  - a resourceVersion that is a canonical decimal (etcd's revisions are) is kept as a number,
//    stored in the map slot itself, where a string cost about 24 bytes more per object.
// Resource versions stay opaque: anything else is kept as the string it was, and two versions
// are equal exactly when their strings are (a canonical decimal has one spelling).

const CANONICAL_DECIMAL = /^[1-9][0-9]{0,14}$/;

type Version = string | number;

/** The stored form of a resourceVersion ('' when the object had none). */
export function compactVersion(rv: string): Version {
  return CANONICAL_DECIMAL.test(rv) ? Number(rv) : rv;
}

export class KnownObjects {
  private readonly byNamespace = new Map<string, Map<string, Version>>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The stored version of an object (compare with compactVersion(rv)), undefined if unknown. */
  get(namespace: string, name: string): Version | undefined {
    return this.byNamespace.get(namespace)?.get(name);
  }

  set(namespace: string, name: string, version: Version): void {
    let names = this.byNamespace.get(namespace);
    if (!names) this.byNamespace.set(namespace, (names = new Map()));
    const before = names.size;
    names.set(name, version);
    this.count += names.size - before;
  }

  delete(namespace: string, name: string): boolean {
    const names = this.byNamespace.get(namespace);
    if (!names?.delete(name)) return false;
    this.count--;
    if (names.size === 0) this.byNamespace.delete(namespace);
    return true;
  }

  /**
   * The (namespace, name) of what this holds and `other` does not: after a list, the objects
   * deleted meanwhile. Walks the maps in place: no pair is made for an object that is still there.
   */
  missingFrom(other: KnownObjects): [string, string][] {
    const out: [string, string][] = [];
    for (const [ns, names] of this.byNamespace) {
      const theirs = other.byNamespace.get(ns);
      for (const name of names.keys()) if (!theirs?.has(name)) out.push([ns, name]);
    }
    return out;
  }
}
