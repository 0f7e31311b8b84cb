// The in-memory zone: services, their EndpointSlices and (for verified pod records) pods, with the
// indexes the resolver needs and the generations the response cache needs. Pure (no I/O, no timers).
//
// Memory: only the compact *Info objects are kept (given by the caller, never mutated afterwards:
// callers must not mutate them either). Per-service derived data (FQDN, the merged headless view)
// is built on first use and dropped on the next change of that service, so a large initial list
// costs no per-update rebuilds; a built headless view is updated by its slices' changes and kept
// across a Service change that counts the same endpoints, and after the sync a large one is kept
// built (keepLargeHeadlessViews), so a query costs no rebuilds.
import { DepGenerations } from './generations.js';
import { buildHeadlessView, updateHeadlessView, type HeadlessView } from './headless.js';
import { samePodIps, sameService, sameSlice } from './equal.js';
import { joinKey } from './names.js';
import { ReverseIndex } from './reverse-index.js';
import { PresenceIndex } from './presence-index.js';
import type { EndpointSliceInfo, GenerationCell, PodInfo, ServiceInfo, ServiceKind, ZoneReader, ZoneWriter } from './types.js';

/** The gen of a ServiceEntry that is no longer the service's current one. */
const STALE = -1;

export interface ServiceEntry {
  readonly info: ServiceInfo;
  /**
   * The generation of `svc/<ns>/<name>` while this entry is the service's current one: stamped
   * with the zone's generation at every change of the service or its slices; -1 (STALE) once
   * the entry is replaced or deleted. The response cache holds the entry as the cell of its
   * answers (ZoneReader.depCell), so live services need no map of generations by key.
   */
  gen: number;
  /**
   * Derived data for one zone name; rebuilt when the zone name differs (tests use several).
   * Every field is there from the literal on (undefined until used): a property added later
   * goes to an out-of-object array, 40 more bytes per Service (20,000 of them in a heap snapshot).
   */
  memo: { zone: string; fqdn: string; headless: HeadlessView | undefined; hasReady: boolean | undefined } | undefined;
}

export interface ZoneStats {
  services: number;
  clusterIPServices: number;
  headlessServices: number;
  externalNameServices: number;
  namespaces: number;
  endpointSlices: number;
  /** Addresses listed by all slices (ready or not, any service). */
  endpoints: number;
  pods: number;
  reverseIps: number;
  generation: number;
  tombstones: number;
}

// The dependency keys: the zone keeps one per service, namespace and name it has seen, flat
// (joinKey). Lookups (resolve/) get the same strings from the functions below.

/**
 * Dependency key of everything at or under a service name (ZoneReader). Built by concatenation,
 * not joinKey: resolve/ makes one for nearly every name under `svc`, most of them search-path
 * expansions answered NXDOMAIN, whose key is never hashed or kept. Array#join cost about 90 ns a
 * call there (14% of an NXDOMAIN's time in the handler, measured); the rope `+` makes costs a few
 * and is flattened only if the answer is cached. What the zone keeps is built flat (touch()).
 */
export function serviceDep(namespace: string, name: string): string {
  return 'svc/' + namespace + '/' + name;
}

/** Dependency key of `*.<ns>.svc.<zone>` wildcards: any service (or its slices) of the namespace. */
export function namespaceDep(namespace: string): string {
  return joinKey('ns', namespace);
}

/** Dependency key of `<name>.*.svc.<zone>` wildcards: any service of that name, in any namespace. */
export function nameDep(name: string): string {
  return joinKey('name', name);
}

export interface ZoneOptions {
  /**
   * Keep the indexes only the legacy `*` wildcards read (--wildcards): the namespaces of every
   * service name, and the generations of `ns/<ns>` and `name/<svc>`. Two more entries per
   * Service; without them a wildcard dependency reads as the global generation and
   * servicesNamed() walks the namespaces. Default true (the zone answers everything).
   */
  wildcards?: boolean;
}

export class Zone implements ZoneWriter, ZoneReader {
  private gen = 0;
  private readonly deps = new DepGenerations();
  /** Namespace and name dependencies of wildcards, apart so they never crowd the service ones. */
  private readonly wildDeps: DepGenerations | undefined;
  /** namespace → name → entry: the namespace level answers `<ns>.svc.<zone>` and wildcards. */
  private readonly services = new Map<string, Map<string, ServiceEntry>>();
  /** service name → namespaces that have a service of that name (for `<name>.*` wildcards). */
  // Most names live in one namespace: the namespace itself then, a Set only from the second one
  // on (a Set per Service name was ~130 bytes per Service).
  private readonly namespacesByName: Map<string, string | Set<string>> | undefined;
  /** '<ns>/<service>' → slice name → slice; a slice may arrive before its service. */
  private readonly slicesByService = new Map<string, Map<string, EndpointSliceInfo>>();
  /** '<ns>/<slice>' → service name, to find a slice again on delete or relabel. */
  private readonly sliceOwner = new Map<string, string>();
  /** IP → the services that may name it; an owner is a ServiceInfo of the service (indexReverse). */
  private readonly reverse = new ReverseIndex<ServiceInfo>(sameOwner);
  /**
   * namespace → pod name → its IPs (none once finished). By namespace, then name: the name is the
   * string the reflector keeps anyway, where a joined '<ns>/<name>' key was one more per pod.
   */
  private readonly pods = new Map<string, Map<string, readonly string[]>>();
  private podCount = 0;
  /**
   * IP → the namespace of the one pod with it (nearly every IP), or namespace → number of pods
   * with it when several have it (host-network pods share the node's IP), where a joined
   * '<ns>/<ip>' key per pod IP was a string of its own.
   */
  private readonly podIps = new Map<string, string | Map<string, number>>();
  private readonly podNamespaces = new Map<string, number>();
  /** The changes that can change a zone transfer (contentGeneration). */
  private contentChanges = 0;
  private readonly kinds: Record<ServiceKind, number> = { ClusterIP: 0, Headless: 0, ExternalName: 0 };
  private serviceCount = 0;
  private endpointCount = 0;
  /** Set by keepLargeHeadlessViews: the zone name, and the size from which a headless view is kept built. */
  private largeViews: { zone: string; minEndpoints: number } | undefined;
  /** Which services and namespaces may exist, read from a question's bytes (resolve/absent.ts). */
  readonly presence = new PresenceIndex(
    () => this.serviceKeys(),
    () => this.serviceCount,
  );

  constructor(o: ZoneOptions = {}) {
    // without --wildcards nothing reads these: at 100,000 Services they were about 10 MB
    if (o.wildcards ?? true) {
      this.wildDeps = new DepGenerations();
      this.namespacesByName = new Map();
    }
  }

  get generation(): number {
    return this.gen;
  }

  /**
   * Bumped by the changes that can change a zone transfer (transfer/records.ts): a Service's, a
   * headless Service's endpoints, a ClusterIP Service gaining its first ready endpoint or losing
   * its last (--ignore-empty-service), bumpGeneration. Not by pods (in no transfer) nor by the
   * other endpoint changes, the bulk of a cluster's churn: they need not move the SOA serial and
   * send every secondary a transfer of the same zone.
   */
  get contentGeneration(): number {
    return this.contentChanges;
  }

  depGeneration(dep: string): number {
    if (dep === 'static') return 0;
    if (dep.startsWith('svc/')) return this.depCell(dep)?.gen ?? this.deps.get(dep);
    if (this.wildDeps && (dep.startsWith('ns/') || dep.startsWith('name/'))) return this.wildDeps.get(dep);
    return this.gen; // '*' and anything unknown: conservative
  }

  /** The current entry of the service a 'svc/<ns>/<name>' dep names (no label holds a '/'). */
  depCell(dep: string): GenerationCell | undefined {
    if (!dep.startsWith('svc/')) return undefined;
    const slash = dep.indexOf('/', 4);
    return slash < 0 ? undefined : this.getService(dep.slice(4, slash), dep.slice(slash + 1));
  }

  // ---- writer ----

  setService(s: ServiceInfo): void {
    const old = this.getService(s.namespace, s.name);
    if (old && sameService(old.info, s)) return;
    const key = joinKey(s.namespace, s.name);
    // A headless service that stays headless lists the same addresses: its reverse entries stay,
    // owned by the info they were indexed with (sameOwner), and its built view stays when it
    // counts the same endpoints. A change of the ports of a Service of 20,000 endpoints
    // re-indexed every address (6-13 ms) and dropped the view for the next query to rebuild
    // (11-21 ms): now it costs the time of the Service object.
    const staysHeadless = old?.info.kind === 'Headless' && s.kind === 'Headless';
    const view = staysHeadless && old.info.publishNotReadyAddresses === s.publishNotReadyAddresses ? old.memo : undefined;
    if (!staysHeadless) this.indexReverse(key, old?.info, -1); // before the entry changes
    let ns = this.services.get(s.namespace);
    if (!ns) this.services.set(s.namespace, (ns = new Map()));
    const entry: ServiceEntry = { info: s, memo: undefined, gen: 0 }; // gen: stamped by touch() below
    ns.set(s.name, entry);
    if (old) old.gen = STALE;
    const names = this.namespacesByName;
    const byName = names?.get(s.name);
    if (!names) {
      // no wildcard index kept
    } else if (byName === undefined) names.set(s.name, s.namespace);
    else if (typeof byName === 'string') {
      if (byName !== s.namespace) names.set(s.name, new Set([byName, s.namespace]));
    } else byName.add(s.namespace);
    if (old) this.kinds[old.info.kind]--;
    else {
      this.serviceCount++;
      this.presence.add(s.namespace, s.name);
    }
    this.kinds[s.kind]++;
    if (!staysHeadless) this.indexReverse(key, s, +1);
    this.touch(s.namespace, s.name);
    if (view?.headless) this.memo(entry, view.zone).headless = view.headless;
  }

  deleteService(namespace: string, name: string): void {
    const old = this.getService(namespace, name);
    if (!old) return;
    this.indexReverse(joinKey(namespace, name), old.info, -1);
    const ns = this.services.get(namespace)!;
    ns.delete(name);
    old.gen = STALE;
    if (ns.size === 0) this.services.delete(namespace);
    const names = this.namespacesByName;
    const byName = names?.get(name);
    if (!names || byName === undefined) {
      // no wildcard index kept
    } else if (typeof byName === 'string') names.delete(name);
    else {
      byName.delete(namespace);
      if (byName.size === 1) names.set(name, byName.values().next().value!);
    }
    this.kinds[old.info.kind]--;
    this.serviceCount--;
    this.presence.remove(namespace, name);
    this.touch(namespace, name);
  }

  setSlice(s: EndpointSliceInfo): void {
    const sliceKey = joinKey(s.namespace, s.name);
    const ownerName = this.sliceOwner.get(sliceKey);
    if (ownerName !== undefined) {
      const current = this.slicesByService.get(`${s.namespace}/${ownerName}`)?.get(s.name);
      if (current && sameSlice(current, s)) return;
      if (ownerName !== s.serviceName) this.deleteSlice(s.namespace, s.name); // relabelled
    }
    const before = this.sliceSense(s.namespace, s.serviceName);
    const svcKey = joinKey(s.namespace, s.serviceName);
    let group = this.slicesByService.get(svcKey);
    if (!group) this.slicesByService.set(svcKey, (group = new Map()));
    const old = group.get(s.name);
    const entry = this.getService(s.namespace, s.serviceName);
    const svc = entry?.info;
    const owner = svc?.kind === 'Headless' ? svc : undefined; // the reverse index's owner
    if (old) {
      this.endpointCount -= countAddresses(old);
      if (owner) this.indexSlice(owner, old, -1);
    }
    const built = owner ? entry!.memo : undefined;
    group.set(s.name, s);
    this.sliceOwner.set(sliceKey, s.serviceName);
    this.endpointCount += countAddresses(s);
    if (owner) this.indexSlice(owner, s, +1);
    this.touch(s.namespace, s.serviceName, this.sliceChanged(before, s.namespace, s.serviceName));
    this.updateView(entry, built, group, old, s);
    if (owner && !built?.headless) this.buildIfLarge(entry!, s.endpoints.length - (old?.endpoints.length ?? 0));
  }

  /** A headless service's view built before a change of one of its slices: updated (headless.ts), not dropped. */
  private updateView(
    e: ServiceEntry | undefined,
    built: ServiceEntry['memo'],
    slices: Map<string, EndpointSliceInfo>,
    old: EndpointSliceInfo | undefined,
    next: EndpointSliceInfo | undefined,
  ): void {
    if (!e || !built?.headless) return;
    this.memo(e, built.zone).headless = updateHeadlessView(built.headless, e.info, slices.values(), old, next, built.fqdn);
  }

  deleteSlice(namespace: string, name: string): void {
    const sliceKey = `${namespace}/${name}`;
    const ownerName = this.sliceOwner.get(sliceKey);
    if (ownerName === undefined) return;
    const svcKey = `${namespace}/${ownerName}`;
    const group = this.slicesByService.get(svcKey)!;
    const old = group.get(name)!;
    const before = this.sliceSense(namespace, ownerName);
    const entry = this.getService(namespace, ownerName);
    const owner = entry?.info;
    const built = owner?.kind === 'Headless' ? entry!.memo : undefined;
    if (owner?.kind === 'Headless') this.indexSlice(owner, old, -1);
    group.delete(name);
    if (group.size === 0) this.slicesByService.delete(svcKey);
    this.sliceOwner.delete(sliceKey);
    this.endpointCount -= countAddresses(old);
    this.touch(namespace, ownerName, this.sliceChanged(before, namespace, ownerName));
    this.updateView(entry, built, group, old, undefined);
  }

  setPod(p: PodInfo): void {
    let names = this.pods.get(p.namespace);
    const old = names?.get(p.name);
    // a finished pod (Succeeded, Failed) keeps status.podIP, but the IP is free for the next pod,
    // maybe in another namespace: it vouches for none (CoreDNS does not list finished pods)
    const ips = p.finished ? NO_IPS : p.ips;
    if (old && samePodIps(old, ips)) return;
    if (old) this.indexPod(p.namespace, old, -1);
    else this.podCount++;
    if (!names) this.pods.set(p.namespace, (names = new Map()));
    names.set(p.name, ips);
    this.indexPod(p.namespace, ips, +1);
    this.gen++;
  }

  deletePod(namespace: string, name: string): void {
    const names = this.pods.get(namespace);
    const old = names?.get(name);
    if (!old) return;
    this.indexPod(namespace, old, -1);
    names!.delete(name);
    if (names!.size === 0) this.pods.delete(namespace);
    this.podCount--;
    this.gen++;
  }

  /**
   * Something outside the zone's objects changed what it answers (a namespace started or stopped
   * matching --namespace-labels): answers that depend on '*' must go.
   */
  bumpGeneration(): void {
    this.gen++;
    this.contentChanges++;
  }

  // ---- reader (for the resolver) ----

  getService(namespace: string, name: string): ServiceEntry | undefined {
    return this.services.get(namespace)?.get(name);
  }

  hasNamespace(namespace: string): boolean {
    return this.services.has(namespace);
  }

  namespaces(): IterableIterator<string> {
    return this.services.keys();
  }

  servicesIn(namespace: string): IterableIterator<ServiceEntry> {
    return (this.services.get(namespace) ?? new Map<string, ServiceEntry>()).values();
  }

  /** [namespace, name] of every service (what the presence index counts when it rebuilds). */
  private *serviceKeys(): IterableIterator<readonly [string, string]> {
    for (const [namespace, names] of this.services) for (const name of names.keys()) yield [namespace, name];
  }

  /** Every service, namespace by namespace (lazily: a bounded walk stops early at no extra cost). */
  *allServices(): IterableIterator<ServiceEntry> {
    for (const ns of this.services.values()) yield* ns.values();
  }

  /** The services called `name`, in any namespace (one look per namespace without the wildcard index). */
  *servicesNamed(name: string): IterableIterator<ServiceEntry> {
    const byName = this.namespacesByName ? this.namespacesByName.get(name) : this.services.keys();
    for (const namespace of typeof byName === 'string' ? [byName] : (byName ?? [])) {
      const e = this.getService(namespace, name);
      if (e) yield e;
    }
  }

  /** `<svc>.<ns>.svc.<zone>`, lower-case, no trailing dot. */
  fqdn(e: ServiceEntry, zone: string): string {
    return this.memo(e, zone).fqdn;
  }

  /** The merged endpoints of a headless service (empty view for other kinds). */
  headless(e: ServiceEntry, zone: string): HeadlessView {
    const m = this.memo(e, zone);
    if (!m.headless) {
      const slices = this.slicesByService.get(`${e.info.namespace}/${e.info.name}`)?.values() ?? [];
      m.headless = buildHeadlessView(e.info, e.info.kind === 'Headless' ? slices : [], m.fqdn);
    }
    return m.headless;
  }

  /**
   * Keeps built the view of every headless service whose slices list at least `minEndpoints`
   * endpoints (ready or not), instead of building it on its first query: builds those of now,
   * and from now on the change that brings a service to that size builds its view (about that
   * many endpoints' work), which later changes update (headless.ts). Called once the initial sync is done,
   * before a cluster name is answered: a whole build grows with the service (a median of 13 ms at
   * 5,000 endpoints, 78 at 20,000: the churn bench's reference), and a large service created later
   * would have had its whole view built by its first query. Smaller views stay lazy: their build
   * is short, and a service nobody asks for holds none. Returns how many views it built now.
   */
  keepLargeHeadlessViews(zone: string, minEndpoints: number): number {
    this.largeViews = { zone, minEndpoints };
    let built = 0;
    for (const ns of this.services.values()) {
      for (const e of ns.values()) if (e.info.kind === 'Headless' && !e.memo?.headless && this.buildIfLarge(e, Infinity)) built++;
    }
    return built;
  }

  /**
   * After keepLargeHeadlessViews: builds the view of a headless service whose slices now list
   * enough endpoints and listed fewer before the change that `grew` them by so many (Infinity:
   * whatever they listed). Only the change that crosses the size builds: a large service whose
   * view was dropped (publishNotReadyAddresses changed) or never built (its Service came after
   * its slices) would cost a whole build in some later slice change, where its first query costs
   * no more and a service nobody asks for costs nothing.
   */
  private buildIfLarge(e: ServiceEntry, grew: number): boolean {
    const large = this.largeViews;
    if (!large || grew <= 0) return false;
    let listed = 0;
    for (const s of this.slicesByService.get(`${e.info.namespace}/${e.info.name}`)?.values() ?? []) listed += s.endpoints.length;
    if (listed < large.minEndpoints || listed - grew >= large.minEndpoints) return false;
    this.headless(e, large.zone);
    return true;
  }

  /**
   * Whether any EndpointSlice of the service lists an address that counts (ready, or the service
   * publishes not-ready addresses). For --ignore-empty-service; memoised like the headless view.
   */
  hasReadyEndpoint(e: ServiceEntry, zone: string): boolean {
    const m = this.memo(e, zone);
    m.hasReady ??= this.anyReady(e);
    return m.hasReady;
  }

  private anyReady(e: ServiceEntry): boolean {
    const pnr = e.info.publishNotReadyAddresses;
    for (const s of this.slicesByService.get(`${e.info.namespace}/${e.info.name}`)?.values() ?? []) {
      if (s.endpoints.some((ep) => (ep.ready || pnr) && ep.addresses.length > 0)) return true;
    }
    return false;
  }

  /**
   * What a zone transfer takes from a service's slices, before they change: 'records' (a headless
   * Service's endpoints are its records), whether it has a ready endpoint (a ClusterIP Service's
   * only use of them), undefined (none: no such Service, or an ExternalName one).
   */
  private sliceSense(namespace: string, name: string): 'records' | boolean | undefined {
    const e = this.getService(namespace, name);
    if (e?.info.kind === 'Headless') return 'records';
    return e?.info.kind === 'ClusterIP' ? (e.memo?.hasReady ?? this.anyReady(e)) : undefined;
  }

  /** Whether a slice change can change a zone transfer, given sliceSense before it. */
  private sliceChanged(before: 'records' | boolean | undefined, namespace: string, name: string): boolean {
    if (typeof before !== 'boolean') return before === 'records';
    return before !== this.anyReady(this.getService(namespace, name)!);
  }

  /**
   * PTR targets of an IP: `<svc>.<ns>.svc.<zone>` for a cluster IP, `<label>.<svc>.<ns>.svc.<zone>`
   * for a counted headless endpoint (one per name the address has: several endpoints may share it);
   * one per owning service otherwise.
   */
  ptrTargets(ip: string, zone: string): string[] {
    const out: string[] = [];
    for (const owner of this.reverse.owners(ip)) {
      const e = this.getService(owner.namespace, owner.name);
      if (!e) continue;
      if (e.info.kind === 'ClusterIP') {
        if (e.info.clusterIPs.includes(ip)) out.push(this.fqdn(e, zone));
      } else if (e.info.kind === 'Headless') {
        const ep = this.headless(e, zone).byIp.get(ip);
        if (ep) out.push(ep.fqdn);
        if (ep?.also !== undefined) for (const other of ep.also) out.push(other.fqdn);
      }
    }
    return out;
  }

  podHasIp(namespace: string, ip: string): boolean {
    const v = this.podIps.get(ip);
    return typeof v === 'string' ? v === namespace : v !== undefined && v.has(namespace);
  }

  hasPodsIn(namespace: string): boolean {
    return this.podNamespaces.has(namespace);
  }

  stats(): ZoneStats {
    return {
      services: this.serviceCount,
      clusterIPServices: this.kinds.ClusterIP,
      headlessServices: this.kinds.Headless,
      externalNameServices: this.kinds.ExternalName,
      namespaces: this.services.size,
      endpointSlices: this.sliceOwner.size,
      endpoints: this.endpointCount,
      pods: this.podCount,
      reverseIps: this.reverse.size,
      generation: this.gen,
      tombstones: this.deps.tombstoneCount,
    };
  }

  /** Every pod, for the /cache dump. */
  *allPods(): IterableIterator<{ namespace: string; name: string; ips: readonly string[] }> {
    for (const [namespace, names] of this.pods) for (const [name, ips] of names) yield { namespace, name, ips };
  }

  // ---- internals ----

  private memo(e: ServiceEntry, zone: string): NonNullable<ServiceEntry['memo']> {
    if (!e.memo || e.memo.zone !== zone) {
      e.memo = { zone, fqdn: [e.info.name, e.info.namespace, 'svc', zone].join('.'), headless: undefined, hasReady: undefined };
    }
    return e.memo;
  }

  /** A change of a service or its slices: new generations, and derived data rebuilt on next use. */
  private touch(namespace: string, name: string, content = true): void {
    this.gen++;
    if (content) this.contentChanges++;
    const e = this.getService(namespace, name);
    const dep = joinKey('svc', namespace, name); // serviceDep's key, flat: the deps map may keep it
    if (e) {
      // a live service holds its own generation; the map keeps only the others
      e.memo = undefined;
      e.gen = this.gen;
      this.deps.forget(dep);
    } else if (this.slicesByService.has(`${namespace}/${name}`)) this.deps.bump(dep, this.gen);
    else this.deps.bury(dep, this.gen);
    // what the wildcards over this namespace or this name depend on
    const wild = this.wildDeps;
    if (!wild) return;
    const nsDep = namespaceDep(namespace);
    if (this.services.has(namespace)) wild.bump(nsDep, this.gen);
    else wild.bury(nsDep, this.gen);
    const byNameDep = nameDep(name);
    if (this.namespacesByName!.has(name)) wild.bump(byNameDep, this.gen);
    else wild.bury(byNameDep, this.gen);
  }

  /**
   * Adds (+1) or removes (-1) the reverse candidates a service contributes in its given state,
   * owned by that state's info: a change of kind removes with the old info before adding with
   * the new one; a headless service's entries outlive a change of its Service object (setService)
   * and are removed by sameOwner. `key`: '<ns>/<name>', its slices.
   */
  private indexReverse(key: string, info: ServiceInfo | undefined, sign: 1 | -1): void {
    if (!info) return;
    if (info.kind === 'ClusterIP') {
      for (const ip of info.clusterIPs) this.reverseOp(ip, info, sign);
    } else if (info.kind === 'Headless') {
      for (const s of this.slicesByService.get(key)?.values() ?? []) this.indexSlice(info, s, sign);
    }
  }

  private indexSlice(owner: ServiceInfo, s: EndpointSliceInfo, sign: 1 | -1): void {
    for (const e of s.endpoints) for (const ip of e.addresses) this.reverseOp(ip, owner, sign);
  }

  private reverseOp(ip: string, owner: ServiceInfo, sign: 1 | -1): void {
    if (sign > 0) this.reverse.add(ip, owner);
    else this.reverse.remove(ip, owner);
  }

  /**
   * A namespace counts in podNamespaces once per pod IP, so `<ns>.pod.<zone>` is an empty
   * non-terminal only while some pod name exists below it (a Pending or finished pod has none).
   */
  private indexPod(namespace: string, ips: readonly string[], sign: 1 | -1): void {
    for (let i = 0; i < ips.length; i++) {
      const ip = ips[i]!;
      if (ips.indexOf(ip) < i) continue; // listed twice: counted once
      bumpCount(this.podNamespaces, namespace, sign);
      const v = this.podIps.get(ip);
      if (v === undefined) {
        if (sign > 0) this.podIps.set(ip, namespace);
      } else if (typeof v === 'string') {
        if (sign < 0) {
          if (v === namespace) this.podIps.delete(ip);
        } else {
          const byNamespace = new Map([[v, 1]]);
          bumpCount(byNamespace, namespace, 1);
          this.podIps.set(ip, byNamespace);
        }
      } else {
        bumpCount(v, namespace, sign);
        // one pod left: back to its namespace alone
        const only = v.size === 1 ? v.entries().next().value! : undefined;
        if (v.size === 0) this.podIps.delete(ip);
        else if (only?.[1] === 1) this.podIps.set(ip, only[0]);
      }
    }
  }
}

const NO_IPS: string[] = [];

/** Two owners of reverse entries stand for the same service: infos of one namespace and name. */
function sameOwner(a: ServiceInfo, b: ServiceInfo): boolean {
  return a === b || (a.name === b.name && a.namespace === b.namespace);
}

function countAddresses(s: EndpointSliceInfo): number {
  let n = 0;
  for (const e of s.endpoints) n += e.addresses.length;
  return n;
}

function bumpCount(m: Map<string, number>, key: string, by: 1 | -1): void {
  const n = (m.get(key) ?? 0) + by;
  if (n <= 0) m.delete(key);
  else m.set(key, n);
}
