// The records of a headless service, merged from all of its EndpointSlices. Pure; built lazily
// by the zone and memoised until the service changes; a change of one slice updates a built view
// in the time of that slice (updateHeadlessView), not of all the service's endpoints.
import { dashedLabel, ipFamily } from './names.js';
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
}

export interface HeadlessView {
  /** In stable order: slices by name, then endpoint order. One entry per address. */
  endpoints: HeadlessEndpoint[];
  /** Endpoint label → its addresses (several endpoints may share a hostname: all of them answer). */
  byLabel: Map<string, HeadlessEndpoint[]>;
  byIp: Map<string, HeadlessEndpoint>;
  /** Lower-case protocols of named ports ('tcp'), for `_<proto>.<svc>` existence. */
  namedProtocols: Set<string>;
  /** Built the slow way (an address listed twice, mergedHeadlessView): not updated, rebuilt. */
  merged?: true;
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

/**
 * An endpoint counts when ready or when the service publishes not-ready addresses. An address in
 * several slices (slice churn, a mirrored slice) appears once; its first non-empty hostname names it
 * (else its first pod name, present only with --endpoint-pod-names).
 */
export function buildHeadlessView(svc: ServiceInfo, slices: Iterable<EndpointSliceInfo>, serviceFqdn: string): HeadlessView {
  const ordered = [...slices].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
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
 * after) is left to a full build. The view before keeps its endpoints list (a zone transfer or a
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
  const ordered = [...slices].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  if (before.merged) return buildHeadlessView(svc, ordered, serviceFqdn);
  const pnr = svc.publishNotReadyAddresses;
  const removed = old ? endpointsOf(old, pnr, serviceFqdn) : [];
  const added = next ? endpointsOf(next, pnr, serviceFqdn) : [];
  // every check before the first change to the shared maps: a full build leaves them alone
  const leaving = new Set<string>();
  for (const ep of removed) leaving.add(ep.ip);
  const arriving = new Set<string>();
  for (const ep of added) {
    if (arriving.has(ep.ip) || (before.byIp.has(ep.ip) && !leaving.has(ep.ip))) return buildHeadlessView(svc, ordered, serviceFqdn);
    arriving.add(ep.ip);
  }
  const { byIp, byLabel } = before;
  for (const ep of removed) {
    byIp.delete(ep.ip);
    const same = byLabel.get(ep.label)!;
    if (same.length === 1) byLabel.delete(ep.label);
    else byLabel.set(ep.label, same.filter((x) => x !== ep));
  }
  const view: HeadlessView = { endpoints: [], byLabel, byIp, namedProtocols: new Set() };
  for (const ep of added) {
    byIp.set(ep.ip, ep);
    const same = byLabel.get(ep.label);
    if (same) same.push(ep);
    else byLabel.set(ep.label, [ep]);
  }
  for (const slice of ordered) {
    const eps = endpointsOf(slice, pnr, serviceFqdn);
    for (const ep of eps) view.endpoints.push(ep);
    if (eps.length > 0) for (const p of slice.ports) if (p.name) view.namedProtocols.add(p.protocol.toLowerCase());
  }
  return view;
}

function addToView(view: HeadlessView, ep: HeadlessEndpoint): void {
  const same = view.byLabel.get(ep.label);
  if (same) same.push(ep);
  else view.byLabel.set(ep.label, [ep]);
  for (const p of ep.ports) if (p.name) view.namedProtocols.add(p.protocol.toLowerCase());
}

/** buildHeadlessView when an address is listed more than once: each address's listings merged (built from the slices alone, with nothing kept: also the reference of the tests). */
export function mergedHeadlessView(svc: ServiceInfo, ordered: readonly EndpointSliceInfo[], serviceFqdn: string): HeadlessView {
  const byIp = new Map<string, { ep: HeadlessEndpoint; hostname: string; podName: string; ports: PortInfo[] }>();
  for (const slice of ordered) {
    for (const e of slice.endpoints) {
      if (!counted(e, svc.publishNotReadyAddresses)) continue;
      for (const ip of e.addresses) {
        const fam = ipFamily(ip);
        if (fam === 0) continue;
        const seen = byIp.get(ip);
        if (seen) {
          if (!seen.hostname && e.hostname) seen.hostname = e.hostname;
          if (!seen.podName && e.podName) seen.podName = e.podName;
          for (const p of slice.ports) if (!seen.ports.some((q) => samePort(p, q))) seen.ports.push(p);
          continue;
        }
        const ports = [...slice.ports];
        byIp.set(ip, { hostname: e.hostname, podName: e.podName ?? '', ports, ep: { ip, v6: fam === 6, label: '', fqdn: '', ports } });
      }
    }
  }
  const view: HeadlessView = { endpoints: [], byLabel: new Map(), byIp: new Map(), namedProtocols: new Set(), merged: true };
  for (const { ep, hostname, podName } of byIp.values()) {
    // a hostname wins; then the pod name (set only with --endpoint-pod-names); then the dashed IP
    ep.label = hostname || podName || dashedLabel(ep.ip);
    ep.fqdn = `${ep.label}.${serviceFqdn}`;
    view.endpoints.push(ep);
    view.byIp.set(ep.ip, ep);
    addToView(view, ep);
  }
  return view;
}
