// A JSON-friendly listing of every record the zone serves (the /cache HTTP endpoint). Zone-file
// style text data; SRV weights as the resolver computes them for the whole owner name. Synthetic
// names (insecure pod names, SOA/NS, dns-version) are not listed.
import { ipToReverseName } from './names.js';
import type { PortInfo, ServiceKind } from './types.js';
import type { ServiceEntry, Zone } from './zone.js';

export interface DumpRecord {
  name: string;
  type: 'A' | 'AAAA' | 'SRV' | 'CNAME' | 'PTR';
  data: string;
}

export interface DumpService {
  namespace: string;
  name: string;
  kind: ServiceKind;
  records: DumpRecord[];
}

export interface ZoneDump {
  zone: string;
  generation: number;
  services: DumpService[];
  pods: { namespace: string; name: string; ips: string[] }[];
}

const addressType = (ip: string): 'A' | 'AAAA' => (ip.includes(':') ? 'AAAA' : 'A');

/** SRV rows as [owner, port, target]: the weight depends on how many share the owner. */
function srvRecords(rows: [string, number, string][]): DumpRecord[] {
  const seen = new Set<string>();
  const unique = rows.filter(([o, p, t]) => {
    const k = `${o} ${p} ${t}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  const perOwner = new Map<string, number>();
  for (const [o] of unique) perOwner.set(o, (perOwner.get(o) ?? 0) + 1);
  return unique.map(([o, p, t]) => ({
    name: o,
    type: 'SRV',
    data: `10 ${Math.floor(100 / perOwner.get(o)!)} ${p} ${t}.`,
  }));
}

const portName = (p: PortInfo, fqdn: string): string => `_${p.name}._${p.protocol.toLowerCase()}.${fqdn}`;

function serviceRecords(zone: Zone, e: ServiceEntry, zoneName: string): DumpRecord[] {
  const fqdn = zone.fqdn(e, zoneName);
  const { info } = e;
  const out: DumpRecord[] = [];
  if (info.kind === 'ExternalName') {
    if (info.externalName) out.push({ name: fqdn, type: 'CNAME', data: `${info.externalName}.` });
    return out;
  }
  const srv: [string, number, string][] = [];
  if (info.kind === 'ClusterIP') {
    for (const ip of info.clusterIPs) out.push({ name: fqdn, type: addressType(ip), data: ip });
    for (const p of info.ports) {
      srv.push([fqdn, p.port, fqdn]);
      if (p.name) srv.push([portName(p, fqdn), p.port, fqdn]);
    }
    out.push(...srvRecords(srv));
    for (const ip of info.clusterIPs) out.push({ name: ipToReverseName(ip), type: 'PTR', data: `${fqdn}.` });
    return out;
  }
  const view = zone.headless(e, zoneName);
  for (const ep of view.endpoints) {
    out.push({ name: fqdn, type: addressType(ep.ip), data: ep.ip });
    out.push({ name: ep.fqdn, type: addressType(ep.ip), data: ep.ip });
    if (ep.ports.length === 0) srv.push([fqdn, 0, ep.fqdn]);
    for (const p of ep.ports) {
      srv.push([fqdn, p.port, ep.fqdn]);
      if (p.name) srv.push([portName(p, fqdn), p.port, ep.fqdn]);
    }
  }
  out.push(...srvRecords(srv));
  for (const ep of view.endpoints) out.push({ name: ipToReverseName(ep.ip), type: 'PTR', data: `${ep.fqdn}.` });
  return out;
}

export function dumpZone(zone: Zone, zoneName: string): ZoneDump {
  const services: DumpService[] = [];
  for (const ns of [...zone.namespaces()].sort()) {
    const entries = [...zone.servicesIn(ns)].sort((a, b) => (a.info.name < b.info.name ? -1 : 1));
    for (const e of entries) {
      services.push({ namespace: ns, name: e.info.name, kind: e.info.kind, records: serviceRecords(zone, e, zoneName) });
    }
  }
  return { zone: zoneName, generation: zone.generation, services, pods: [...zone.allPods()] };
}
