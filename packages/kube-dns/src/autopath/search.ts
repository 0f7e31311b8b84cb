// The search path a pod's resolver walks, as kubelet writes it into a ClusterFirst pod's
// resolv.conf: `<ns>.svc.<zone> svc.<zone> <zone>`, then the node's own search domains. Pure.

/**
 * When `lname` is `<base>.<ns>.svc.<zone>` (the first expansion a pod of <ns> tries): base and
 * ns. Undefined for anything else: names of other shapes are never completed.
 */
export function firstExpansion(lname: string, zone: string): { base: string; namespace: string } | undefined {
  const suffix = `.svc.${zone}`;
  if (!lname.endsWith(suffix)) return undefined;
  const rest = lname.slice(0, lname.length - suffix.length);
  const dot = rest.lastIndexOf('.');
  if (dot <= 0) return undefined; // `<ns>.svc.<zone>` itself, or an empty base
  return { base: rest.slice(0, dot), namespace: rest.slice(dot + 1) };
}

/**
 * The names the pod would try after the first one, in order: the rest of the cluster search
 * path, the node's search domains (those outside the zone; kube-dns runs with the node's
 * resolv.conf, as kubelet's ClusterFirst pods inherit its search line), then the name itself.
 */
export function remainingCandidates(base: string, zone: string, nodeSearch: readonly string[]): string[] {
  const out = [`${base}.svc.${zone}`, `${base}.${zone}`];
  for (const d of nodeSearch) {
    const name = `${base}.${d}`;
    if (!out.includes(name)) out.push(name);
  }
  out.push(base);
  return out;
}

/**
 * The bases whose remaining candidates include `lname` (the inverse of remainingCandidates):
 * `lname` itself (asked as is, last) and `lname` less each later search domain it ends with.
 */
export function basesReaching(lname: string, zone: string, nodeSearch: readonly string[]): string[] {
  const out = [lname];
  for (const d of [`svc.${zone}`, zone, ...nodeSearch]) {
    if (lname.length > d.length + 1 && lname.endsWith(d) && lname[lname.length - d.length - 1] === '.') {
      const base = lname.slice(0, lname.length - d.length - 1);
      if (!out.includes(base)) out.push(base);
    }
  }
  return out;
}

/**
 * Whether a later name of `base`'s search is itself a first expansion for a pod of `namespace`
 * (`redis.N` → `redis.N.svc.<zone>`; `redis.N.svc.<zone>` asked as is): only then can the pod's
 * own search be taken for a new one.
 */
export function laterNameLooksFirst(base: string, namespace: string, zone: string, nodeSearch: readonly string[]): boolean {
  return remainingCandidates(base, zone, nodeSearch).some((c) => firstExpansion(c, zone)?.namespace === namespace);
}

/** The search domains of a resolv.conf (the last `search` or `domain` line wins, as in glibc). */
export function parseSearchDomains(text: string): string[] {
  let out: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(search|domain)\s+(.*)$/.exec(line);
    if (!m) continue;
    out = m[2]!
      .split(/\s+/)
      .map((d) => d.trim().toLowerCase().replace(/\.$/, ''))
      .filter((d) => d !== '' && !d.startsWith('#') && !d.startsWith(';'));
  }
  return out;
}
