// The records of a headless service, merged from all of its EndpointSlices. Pure; built lazily
// by the zone and memoised until the service or one of its slices changes.
import { dashedLabel, ipFamily } from './names.js';
import type { EndpointSliceInfo, PortInfo, ServiceInfo } from './types.js';

/** One counted address of a headless service. */
export interface HeadlessEndpoint {
  ip: string;
  v6: boolean;
  /** hostname, else the dashed IP label: the first label of `fqdn`. */
  label: string;
  /** `<label>.<svc>.<ns>.svc.<zone>`, lower-case, no trailing dot: SRV target and PTR data. */
  fqdn: string;
  /** Ports of the slice(s) listing the address (merged when several slices list it). */
  ports: PortInfo[];
}

export interface HeadlessView {
  /** In stable order: slices by name, then endpoint order. One entry per address. */
  endpoints: HeadlessEndpoint[];
  /** Endpoint label → its addresses (several endpoints may share a hostname: all of them answer). */
  byLabel: Map<string, HeadlessEndpoint[]>;
  byIp: Map<string, HeadlessEndpoint>;
  /** Lower-case protocols of named ports ('tcp'), for `_<proto>.<svc>` existence. */
  namedProtocols: Set<string>;
}

function samePort(a: PortInfo, b: PortInfo): boolean {
  return a.name === b.name && a.port === b.port && a.protocol === b.protocol;
}

/**
 * An endpoint counts when ready or when the service publishes not-ready addresses. An address in
 * several slices (slice churn, a mirrored slice) appears once; its first non-empty hostname names it
 * (else its first pod name, present only with --endpoint-pod-names).
 */
export function buildHeadlessView(svc: ServiceInfo, slices: Iterable<EndpointSliceInfo>, serviceFqdn: string): HeadlessView {
  const ordered = [...slices].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byIp = new Map<string, { ep: HeadlessEndpoint; hostname: string; podName: string }>();
  for (const slice of ordered) {
    for (const e of slice.endpoints) {
      if (!e.ready && !svc.publishNotReadyAddresses) continue;
      for (const ip of e.addresses) {
        const fam = ipFamily(ip);
        if (fam === 0) continue;
        const seen = byIp.get(ip);
        if (seen) {
          if (!seen.hostname && e.hostname) seen.hostname = e.hostname;
          if (!seen.podName && e.podName) seen.podName = e.podName;
          for (const p of slice.ports) if (!seen.ep.ports.some((q) => samePort(p, q))) seen.ep.ports.push(p);
          continue;
        }
        byIp.set(ip, {
          hostname: e.hostname,
          podName: e.podName ?? '',
          ep: { ip, v6: fam === 6, label: '', fqdn: '', ports: [...slice.ports] },
        });
      }
    }
  }
  const view: HeadlessView = { endpoints: [], byLabel: new Map(), byIp: new Map(), namedProtocols: new Set() };
  for (const { ep, hostname, podName } of byIp.values()) {
    // a hostname wins; then the pod name (set only with --endpoint-pod-names); then the dashed IP
    ep.label = hostname || podName || dashedLabel(ep.ip);
    ep.fqdn = `${ep.label}.${serviceFqdn}`;
    view.endpoints.push(ep);
    view.byIp.set(ep.ip, ep);
    const same = view.byLabel.get(ep.label);
    if (same) same.push(ep);
    else view.byLabel.set(ep.label, [ep]);
    for (const p of ep.ports) if (p.name) view.namedProtocols.add(p.protocol.toLowerCase());
  }
  return view;
}
