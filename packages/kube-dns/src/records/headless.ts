// The records of a headless service, merged from all of its EndpointSlices. Pure; built by the
// zone on first use (or, for a large service, at the initial sync and at the change that makes it
// large: Zone.keepLargeHeadlessViews) and memoised until the service changes what it counts; a
// change of one slice updates a built view in the time of that slice (updateHeadlessView,
// updateMergedView), not of all the service's endpoints.
import { dashedLabel, ipFamily, parseDashedIp } from './names.js';
import type { EndpointInfo, EndpointSliceInfo, PortInfo, ServiceInfo } from './types.js';

/** One counted address of a headless service. */
export interface HeadlessEndpoint {
  ip: string;
  v6: boolean;
  /** hostname, else the dashed IP label: the first label of `fqdn`. */
  label: string;
  /** `<label>.<svc>.<ns>.svc.<zone>`, lower-case, no trailing dot: SRV target and PTR data. */
  fqdn: string;
  /** Ports of the slice(s) listing the address (merged when several slices list it); never mutated. */
  ports: readonly PortInfo[];
  /**
   * The address's other names, in a merged view only: listings of the same address under another
   * hostname (or pod name), as two hostNetwork pods on one node, or a selector-less Service's two
   * instances on one host, are. Each is a name of its own (spec 2.4.1-2.4.3: an A record, an SRV
   * target and a PTR per ready endpoint with a hostname), with the address's ports. Never in a
   * view's `endpoints` (the service's own name lists the address once); found by label.
   */
  also?: readonly HeadlessEndpoint[];
}

export interface HeadlessView {
  /** In stable order: slices by name, then endpoint order. One entry per address. */
  endpoints: HeadlessEndpoint[];
  /**
   * Endpoint label → its endpoints (several may share a hostname: all of them answer), except
   * an endpoint labelled with its own address (no hostname: `10-1-2-3`), found through byIp:
   * ask labelled(). Most endpoints of a Deployment's or a DaemonSet's service have no hostname,
   * and a map entry and an array each were about 100 of the view's 320 bytes per endpoint.
   */
  byLabel: Map<string, HeadlessEndpoint[]>;
  byIp: Map<string, HeadlessEndpoint>;
  /** Lower-case protocols of named ports ('tcp'), for `_<proto>.<svc>` existence. */
  namedProtocols: Set<string>;
  /**
   * Some address was listed twice, when it was built (mergedHeadlessView) or at a change since:
   * its endpoints are made per address, not kept per slice, and a change updates it by merging
   * the changed addresses' listings again (updateMergedView).
   */
  merged?: true;
  /**
   * In a merged view, the addresses listed more than once, each with the names of the slices that
   * list it (once per listing): the others need no check for a repeat, and a change finds the
   * listings of a repeated address in those slices, not by reading every slice.
   */
  twice?: Map<string, string[]>;
}

/** One slice's change, for updateMergedView. */
interface SliceChange {
  /** The slice's name (before and after). */
  name: string;
  /** The addresses the slice listed before the change (counted). */
  listed: ReadonlySet<string>;
  /** The addresses it listed before or lists now: those merged again. */
  addresses: ReadonlySet<string>;
}

function samePort(a: PortInfo, b: PortInfo): boolean {
  return a.name === b.name && a.port === b.port && a.protocol === b.protocol;
}

/**
 * A slice's counted endpoints, one per address, as the view holds them when no other slice lists
 * the address; kept with the slice (a slice is replaced, never changed, on every update), so that
 * a view is built or updated from them without making each endpoint's label, name and object
 * again. The view's endpoints share their slice's port list.
 */
interface SliceEndpoints {
  publishNotReady: boolean;
  serviceFqdn: string;
  endpoints: HeadlessEndpoint[];
}
const sliceEndpoints = new WeakMap<EndpointSliceInfo, SliceEndpoints>();

function counted(e: EndpointInfo, publishNotReady: boolean): boolean {
  return e.ready || publishNotReady;
}

function endpointsOf(slice: EndpointSliceInfo, publishNotReady: boolean, serviceFqdn: string): HeadlessEndpoint[] {
  const kept = sliceEndpoints.get(slice);
  if (kept && kept.publishNotReady === publishNotReady && kept.serviceFqdn === serviceFqdn) return kept.endpoints;
  const endpoints: HeadlessEndpoint[] = [];
  for (const e of slice.endpoints) {
    if (!counted(e, publishNotReady)) continue;
    for (const ip of e.addresses) {
      const fam = ipFamily(ip);
      if (fam === 0) continue;
      // a hostname wins; then the pod name (set only with --endpoint-pod-names); then the dashed IP
      const label = e.hostname || e.podName || dashedLabel(ip);
      endpoints.push({ ip, v6: fam === 6, label, fqdn: `${label}.${serviceFqdn}`, ports: slice.ports });
    }
  }
  sliceEndpoints.set(slice, { publishNotReady, serviceFqdn, endpoints });
  return endpoints;
}

/** The slices by name: the order of a view's endpoints. */
function inNameOrder(slices: Iterable<EndpointSliceInfo>): EndpointSliceInfo[] {
  return [...slices].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Adds the protocols of the named ports to a view's set, for `_<proto>.<svc>`. */
function addProtocols(namedProtocols: Set<string>, ports: readonly PortInfo[]): void {
  for (const p of ports) if (p.name) namedProtocols.add(p.protocol.toLowerCase());
}

/**
 * An endpoint counts when ready or when the service publishes not-ready addresses. An address in
 * several slices (slice churn, a mirrored slice) appears once; its first non-empty hostname names it
 * (else its first pod name, present only with --endpoint-pod-names), and its other listings' other
 * names are names of it too (`also`).
 */
export function buildHeadlessView(svc: ServiceInfo, slices: Iterable<EndpointSliceInfo>, serviceFqdn: string): HeadlessView {
  const ordered = inNameOrder(slices);
  const view: HeadlessView = { endpoints: [], byLabel: new Map(), byIp: new Map(), namedProtocols: new Set() };
  for (const slice of ordered) {
    for (const ep of endpointsOf(slice, svc.publishNotReadyAddresses, serviceFqdn)) {
      // an address listed twice (rare: slices in churn, a mirrored slice): merged, the slow way
      if (view.byIp.has(ep.ip)) return mergedHeadlessView(svc, ordered, serviceFqdn);
      view.byIp.set(ep.ip, ep);
      view.endpoints.push(ep);
    }
  }
  for (const ep of view.endpoints) addToView(view, ep);
  return view;
}

/**
 * The view after one slice of the service changed (`old` replaced by `next`, either absent for an
 * added or deleted slice), made from the view before it. A rolling update of a service of
 * thousands of endpoints changes its slices one after another, and each change used to rebuild
 * the whole view on the next query: 20,000 endpoints held the event loop 32 ms (median; 16 ms
 * from the slices' kept endpoints), 5,000 4.3 ms. Here the maps lose the old slice's endpoints
 * and gain the new one's, and the endpoints list is put together again from the slices' kept
 * lists: the time of the slice and of the number of slices. An address listed twice (before or
 * after) takes updateMergedView. The view before keeps its endpoints list (a zone transfer or a
 * /cache listing under way walks it) but shares its maps with the new one: only the new view is
 * to be asked.
 */
export function updateHeadlessView(
  before: HeadlessView,
  svc: ServiceInfo,
  slices: Iterable<EndpointSliceInfo>,
  old: EndpointSliceInfo | undefined,
  next: EndpointSliceInfo | undefined,
  serviceFqdn: string,
): HeadlessView {
  const ordered = inNameOrder(slices);
  const pnr = svc.publishNotReadyAddresses;
  const removed = old ? endpointsOf(old, pnr, serviceFqdn) : [];
  const added = next ? endpointsOf(next, pnr, serviceFqdn) : [];
  // every check before the first change to the shared maps
  const leaving = new Set<string>();
  for (const ep of removed) leaving.add(ep.ip);
  let duplicate = before.merged === true;
  const arriving = new Set<string>();
  for (const ep of added) {
    if (arriving.has(ep.ip) || (before.byIp.has(ep.ip) && !leaving.has(ep.ip))) duplicate = true;
    arriving.add(ep.ip);
  }
  if (duplicate) {
    const addresses = new Set(leaving);
    for (const ip of arriving) addresses.add(ip);
    return updateMergedView(before, svc, ordered, { name: (next ?? old)!.name, listed: leaving, addresses }, serviceFqdn);
  }
  const { byIp, byLabel } = before;
  for (const ep of removed) {
    byIp.delete(ep.ip);
    unlabel(byLabel, ep);
  }
  for (const ep of added) {
    byIp.set(ep.ip, ep);
    label(byLabel, ep);
  }
  // The list is made by one concat of the slices' kept lists: one array of the final size.
  // Pushed one by one, it grew by copies (16, 25, ... 20,000 endpoints: twice its size in
  // garbage, each copy past 128 KiB a large object of the old generation).
  const lists: (readonly HeadlessEndpoint[])[] = [];
  const namedProtocols = new Set<string>();
  for (const slice of ordered) {
    const eps = endpointsOf(slice, pnr, serviceFqdn);
    lists.push(eps);
    if (eps.length > 0) addProtocols(namedProtocols, slice.ports);
  }
  return { endpoints: ([] as HeadlessEndpoint[]).concat(...lists), byLabel, byIp, namedProtocols };
}

function addToView(view: HeadlessView, ep: HeadlessEndpoint): void {
  label(view.byLabel, ep);
  addProtocols(view.namedProtocols, ep.ports);
}

/**
 * Whether an endpoint's label is its own address with '-' for each '.' or ':' (no hostname):
 * byIp finds it then, and byLabel leaves it out. Compared in place, no string made.
 */
function labelIsAddress(ep: HeadlessEndpoint): boolean {
  const { label: l, ip } = ep;
  if (l.length !== ip.length) return false;
  for (let i = 0; i < ip.length; i++) {
    const c = ip.charCodeAt(i);
    if (c === 0x2e || c === 0x3a ? l.charCodeAt(i) !== 0x2d : l.charCodeAt(i) !== c) return false;
  }
  return true;
}

/** `other`: one of an address's other names (`also`), in byLabel whatever it reads as (byIp holds the first name). */
function label(byLabel: Map<string, HeadlessEndpoint[]>, ep: HeadlessEndpoint, other = false): void {
  if (ep.also !== undefined) for (const name of ep.also) label(byLabel, name, true);
  if (!other && labelIsAddress(ep)) return;
  const same = byLabel.get(ep.label);
  if (same) same.push(ep);
  else byLabel.set(ep.label, [ep]);
}

function unlabel(byLabel: Map<string, HeadlessEndpoint[]>, ep: HeadlessEndpoint, other = false): void {
  if (ep.also !== undefined) for (const name of ep.also) unlabel(byLabel, name, true);
  if (!other && labelIsAddress(ep)) return;
  const same = byLabel.get(ep.label)!;
  if (same.length === 1) byLabel.delete(ep.label);
  else byLabel.set(ep.label, same.filter((x) => x !== ep));
}

/** The endpoint and its other names (`also`): every name of its address, each a target of its own. */
export function namesOf(ep: HeadlessEndpoint): readonly HeadlessEndpoint[] {
  return ep.also === undefined ? [ep] : [ep, ...ep.also];
}

/**
 * The endpoints a label names, the first label of `<label>.<svc>.<ns>.svc.<zone>`: those it is
 * the hostname (or pod name) of, and the one without a hostname whose address it is, dashed.
 * `known`: an endpoint of the view with that label, when the caller has one (an SRV target's),
 * which saves reading the label as an address.
 */
export function labelled(view: HeadlessView, label: string, known?: HeadlessEndpoint): readonly HeadlessEndpoint[] | undefined {
  const named = view.byLabel.get(label);
  let own: HeadlessEndpoint | undefined;
  if (known !== undefined && known.label === label && labelIsAddress(known)) own = known;
  else {
    const ip = parseDashedIp(label);
    own = ip === undefined ? undefined : view.byIp.get(ip);
    if (own !== undefined && (own.label !== label || !labelIsAddress(own))) own = undefined;
  }
  if (own === undefined) return named;
  return named === undefined ? [own] : [...named, own];
}

interface Listing {
  ep: HeadlessEndpoint;
  hostname: string;
  podName: string;
  /** Each listing's name (its hostname, else its pod name), once each, in slice-name order. */
  names: string[];
  ports: PortInfo[];
  /** How many times the address is listed (counted endpoints, all slices). */
  count: number;
  /** The names of the slices listing it, once per listing. */
  slices: string[];
}

/**
 * Each address's listings merged, in slice-name order: its first non-empty hostname, its first
 * pod name, the union of its slices' ports; `only` keeps the addresses it holds and skips the
 * rest. The endpoints are new objects, named but not yet in a view.
 */
function mergeListings(ordered: readonly EndpointSliceInfo[], publishNotReady: boolean, serviceFqdn: string, only?: ReadonlySet<string>): Map<string, Listing> {
  const byIp = new Map<string, Listing>();
  for (const slice of ordered) {
    for (const e of slice.endpoints) {
      if (!counted(e, publishNotReady)) continue;
      for (const ip of e.addresses) {
        if (only && !only.has(ip)) continue;
        const fam = ipFamily(ip);
        if (fam === 0) continue;
        const seen = byIp.get(ip);
        const name = e.hostname || e.podName || '';
        if (seen) {
          seen.count++;
          seen.slices.push(slice.name);
          if (!seen.hostname && e.hostname) seen.hostname = e.hostname;
          if (!seen.podName && e.podName) seen.podName = e.podName;
          if (name && !seen.names.includes(name)) seen.names.push(name);
          for (const p of slice.ports) if (!seen.ports.some((q) => samePort(p, q))) seen.ports.push(p);
          continue;
        }
        const ports = [...slice.ports];
        byIp.set(ip, { hostname: e.hostname, podName: e.podName ?? '', names: name ? [name] : [], ports, count: 1, slices: [slice.name], ep: { ip, v6: fam === 6, label: '', fqdn: '', ports } });
      }
    }
  }
  for (const { ep, hostname, podName, names } of byIp.values()) {
    // a hostname wins; then the pod name (set only with --endpoint-pod-names); then the dashed IP
    ep.label = hostname || podName || dashedLabel(ep.ip);
    ep.fqdn = `${ep.label}.${serviceFqdn}`;
    // the same endpoint listed twice (slice churn) has one name; endpoints sharing the address, one each
    const others = names.filter((n) => n !== ep.label);
    if (others.length > 0) ep.also = others.map((n) => ({ ip: ep.ip, v6: ep.v6, label: n, fqdn: `${n}.${serviceFqdn}`, ports: ep.ports }));
  }
  return byIp;
}

/** buildHeadlessView when an address is listed more than once: each address's listings merged. */
export function mergedHeadlessView(svc: ServiceInfo, ordered: readonly EndpointSliceInfo[], serviceFqdn: string): HeadlessView {
  const empty: HeadlessView = { endpoints: [], byLabel: new Map(), byIp: new Map(), namedProtocols: new Set() };
  return updateMergedView(empty, svc, ordered, undefined, serviceFqdn);
}

/**
 * The view after a change of one slice when an address is listed twice, before or after it: the
 * addresses the changed slice listed or lists (`change.addresses`; no change: every address, a
 * whole build) are merged again, and the others keep their endpoints (their listings did not
 * change). An address listed once is held by its slice's kept endpoint, as in a view without
 * repeats; one listed more than once (`twice`) by an endpoint merged from its listings. The
 * listings of a changed address are read from the changed slice and from the slices `twice`
 * names for it, not from every slice: only an address the change lists again that some other
 * slice listed once (a repeat just made) takes a read of every slice. The list is put together
 * again from the slices' kept endpoints, as updateHeadlessView does, checked one by one only in
 * the slices that list (or listed) a repeat and in the changed one. 20,000 endpoints, one of them
 * listed twice: a whole merged build per change at first (a median of 68-78 ms on kube-dns's
 * heap), then 2.4-2.8 ms reading every slice with a set lookup per address. Once no address is
 * repeated the view is an ordinary one again. Like updateHeadlessView, it shares the maps of the
 * view before and leaves its endpoints list alone.
 */
function updateMergedView(
  before: HeadlessView,
  svc: ServiceInfo,
  ordered: readonly EndpointSliceInfo[],
  change: SliceChange | undefined,
  serviceFqdn: string,
): HeadlessView {
  const pnr = svc.publishNotReadyAddresses;
  const { byIp, byLabel } = before;
  const changed = change?.addresses;
  // the slices to read for the changed addresses' listings (undefined: every slice)
  let sources: Set<string> | undefined;
  if (change) {
    sources = new Set([change.name]);
    for (const ip of change.addresses) {
      const where = before.twice?.get(ip);
      if (where) for (const name of where) sources.add(name);
      else if (byIp.has(ip) && !change.listed.has(ip)) {
        // listed once before, in a slice unknown here
        sources = undefined;
        break;
      }
    }
  }
  const fresh = mergeListings(sources ? ordered.filter((x) => sources.has(x.name)) : ordered, pnr, serviceFqdn, changed);
  const twice = new Map(before.twice);
  const drop = (ip: string) => {
    const gone = byIp.get(ip);
    if (!gone) return;
    byIp.delete(ip);
    unlabel(byLabel, gone);
  };
  const add = (ep: HeadlessEndpoint) => {
    byIp.set(ep.ip, ep);
    label(byLabel, ep);
  };
  for (const ip of changed ?? []) {
    drop(ip);
    twice.delete(ip);
  }
  for (const { ep, count, slices } of fresh.values()) {
    if (count < 2) continue;
    twice.set(ep.ip, slices);
    add(ep);
  }
  // the slices whose endpoints are checked one by one (undefined: all): those listing a repeat,
  // before or after, and the changed one; any other lists only addresses listed once, unchanged
  let checked: Set<string> | undefined;
  if (change) {
    checked = new Set([change.name]);
    for (const names of before.twice?.values() ?? []) for (const name of names) checked.add(name);
    for (const names of twice.values()) for (const name of names) checked.add(name);
  }
  // as in updateHeadlessView: the slices' lists, then one concat
  const lists: (readonly HeadlessEndpoint[])[] = [];
  const namedProtocols = new Set<string>();
  const placed = new Set<string>();
  for (const slice of ordered) {
    const eps = endpointsOf(slice, pnr, serviceFqdn);
    if (eps.length > 0) addProtocols(namedProtocols, slice.ports);
    if (checked !== undefined && !checked.has(slice.name)) {
      lists.push(eps);
      continue;
    }
    const mine: HeadlessEndpoint[] = [];
    for (const ep of eps) {
      if (twice.size > 0 && twice.has(ep.ip)) {
        if (placed.has(ep.ip)) continue;
        placed.add(ep.ip);
        mine.push(byIp.get(ep.ip)!);
        continue;
      }
      // listed once: its slice's kept endpoint, the one the view holds from now on if it changed
      if (!changed || changed.has(ep.ip)) add(ep);
      mine.push(ep);
    }
    lists.push(mine);
  }
  const endpoints = ([] as HeadlessEndpoint[]).concat(...lists);
  // every field in the literal, as the other views' (the resolver reads views of both kinds)
  return twice.size > 0 ? { endpoints, byLabel, byIp, namedProtocols, merged: true, twice } : { endpoints, byLabel, byIp, namedProtocols };
}
