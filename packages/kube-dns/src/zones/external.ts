// --external-zone (CoreDNS k8s_external): Services reachable from outside the cluster, answered
// as `<svc>.<ns>.<external zone>` for an outside DNS server to delegate to.
//   A/AAAA   LoadBalancer ingress IPs and spec.externalIPs
//   CNAME    the ingress hostname when there is no IP (cloud load balancers named by DNS)
//   SRV      `_<port>._<proto>.<svc>.<ns>.<zone>` per named port, target `<svc>.<ns>.<zone>`
//   SOA, NS  at the apex (NS: --external-ns)
// A Service without such an address does not exist here (NXDOMAIN). Pure, like resolve/.
import type { Answer } from 'dns-packet';
import { serviceDep, type Zone } from '../records/zone.js';
import { address, cname, nodata, nxdomain, positive, soa, srv } from '../resolve/answers.js';
import type { Resolution, ResolveOptions } from '../resolve/types.js';

export interface ExternalZone {
  /** lower-case, no trailing dot */
  name: string;
  /** The cluster's options with this zone's name and SOA MNAME: its SOA, TTL, negative answers. */
  opts: ResolveOptions;
  /** NS of the apex, lower-case, no trailing dot. */
  ns: string;
}

/** The external zones, built once at start from the cluster options (`ttl`: --external-ttl, else --ttl). */
export function externalZones(names: readonly string[], ns: string | undefined, base: ResolveOptions, ttl = base.ttl): ExternalZone[] {
  return names.map((name) => {
    const nsName = ns ?? `ns1.dns.${name}`;
    const opts: ResolveOptions = { ...base, zone: name, mname: nsName, ttl };
    // the serial is the cluster's, which may move (--transfer-to): read it through; so are the
    // stub domains inside the zone, set once the ConfigMap is read (a transfer leaves their names out)
    Object.defineProperty(opts, 'serial', { get: () => base.serial, enumerable: true });
    Object.defineProperty(opts, 'dynamicSerial', { get: () => base.dynamicSerial, enumerable: true });
    Object.defineProperty(opts, 'forwardedInZone', { get: () => base.forwardedInZone, enumerable: true });
    return { name, ns: nsName, opts };
  });
}

/** The external zone `lower` is in (at or under its apex), if any. */
export function findExternalZone(lower: string, zones: readonly ExternalZone[]): ExternalZone | undefined {
  for (const z of zones) {
    const n = z.name;
    if (lower === n || (lower.length > n.length && lower.endsWith(n) && lower[lower.length - n.length - 1] === '.')) return z;
  }
  return undefined;
}

const isV6 = (ip: string): boolean => ip.includes(':');

/** Whether `name` is `host` or one of its ancestors. */
function atOrAbove(name: string, host: string): boolean {
  return name === host || (host.length > name.length && host.endsWith(name) && host[host.length - name.length - 1] === '.');
}

export function resolveExternal(zone: Zone, owner: string, lower: string, qtype: string, ez: ExternalZone): Resolution {
  const { opts } = ez;
  if (lower.length === ez.name.length) {
    if (qtype === 'SOA') return positive(opts, [soa(owner, opts)], [], opts.dynamicSerial ? '*' : 'static');
    if (qtype === 'NS') return positive(opts, [{ name: owner, type: 'NS', ttl: opts.ttl, class: 'IN', data: ez.ns }], [], 'static');
    return nodata(opts, 'static');
  }
  const r = resolveBelowApex(zone, owner, lower, qtype, ez);
  // the NS host, when it lies in the zone: it exists (its address is glue in the parent zone), and
  // so do the names between it and the apex (`dns.<zone>`): NXDOMAIN there would deny it (RFC 8020).
  // A Service there keeps its records (only what would be NXDOMAIN becomes NODATA).
  return r.rcode === 'NXDOMAIN' && atOrAbove(lower, ez.ns) ? nodata(opts, '*') : r;
}

/**
 * The namespace has a Service with an outside address (a name below `<ns>.<zone>`). A look at
 * every Service of the namespace, kept until the zone changes: the zone faces the internet, its
 * NXDOMAIN for a namespace of internal Services is never cached by the handler, and 20,000 of
 * them cost 185 µs a question. Bounded: namespaces that do not exist cost nothing to look at.
 */
const externalNamespaces = new WeakMap<Zone, { generation: number; has: Map<string, boolean> }>();
function hasExternalService(zone: Zone, ns: string): boolean {
  let memo = externalNamespaces.get(zone);
  if (!memo || memo.generation !== zone.generation) externalNamespaces.set(zone, (memo = { generation: zone.generation, has: new Map() }));
  let has = memo.has.get(ns);
  if (has === undefined) {
    has = false;
    for (const e of zone.servicesIn(ns)) {
      if (e.info.external) {
        has = true;
        break;
      }
    }
    if (zone.hasNamespace(ns) && memo.has.size < 10_000) memo.has.set(ns, has);
  }
  return has;
}

function resolveBelowApex(zone: Zone, owner: string, lower: string, qtype: string, ez: ExternalZone): Resolution {
  const { opts } = ez;
  const labels = lower.slice(0, lower.length - ez.name.length - 1).split('.');
  const n = labels.length;
  const ns = labels[n - 1]!;
  // `<ns>.<zone>` exists only with a name below it: a Service with an outside address. A namespace
  // of internal Services alone is NXDOMAIN, as in a transfer of the zone, and its name not told
  // to whoever asks from outside (RFC 8020: an empty non-terminal exists by what is below it)
  if (n === 1) return hasExternalService(zone, ns) ? nodata(opts, '*') : nxdomain(opts, '*');
  const svc = labels[n - 2]!;
  const dep = serviceDep(ns, svc);
  const e = zone.getService(ns, svc);
  const ext = e?.info.external;
  if (!e || !ext) return nxdomain(opts, dep);
  const target = `${svc}.${ns}.${ez.name}`;
  const addresses = (name: string, family?: 'A' | 'AAAA'): Answer[] =>
    ext.ips.filter((ip) => family === undefined || (family === 'AAAA') === isV6(ip)).map((ip) => address(name, ip, isV6(ip), opts.ttl));
  const ports = e.info.ports.filter((p) => p.name !== '');
  if (n === 2) {
    if (ext.ips.length === 0) return positive(opts, [cname(owner, ext.hostname, opts.ttl)], [], dep);
    if (qtype === 'A' || qtype === 'AAAA') return positive(opts, addresses(owner, qtype), [], dep);
    if (qtype === 'SRV') return positive(opts, ports.map((p) => srv(owner, p.port, target, opts.ttl)), addresses(target), dep);
    return nodata(opts, dep);
  }
  const proto = labels[n - 3]!;
  const byProto = ports.filter((p) => proto === `_${p.protocol.toLowerCase()}`);
  if (n === 3) return byProto.length ? nodata(opts, dep) : nxdomain(opts, dep);
  if (n !== 4) return nxdomain(opts, dep);
  const matched = byProto.filter((p) => labels[0] === `_${p.name}`);
  if (matched.length === 0) return nxdomain(opts, dep);
  if (qtype !== 'SRV') return nodata(opts, dep);
  const glue = ext.ips.length ? addresses(target) : [cname(target, ext.hostname, opts.ttl)];
  return positive(opts, matched.map((p) => srv(owner, p.port, target, opts.ttl)), glue, dep);
}
