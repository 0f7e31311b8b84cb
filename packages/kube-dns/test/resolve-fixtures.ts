// Builders for the records/resolve unit tests: compact objects as from-kube.ts makes them.
import type { Answer } from 'dns-packet';
import { rrText } from '@kube-dns/dns-client';
import { normalizeIp } from '../src/records/names.js';
import type { EndpointInfo, EndpointSliceInfo, PortInfo, Protocol, ServiceInfo } from '../src/records/types.js';
import { Zone } from '../src/records/zone.js';
import { resolve } from '../src/resolve/resolve.js';
import type { Resolution, ResolveOptions } from '../src/resolve/types.js';

// The rule tables cover the legacy `*` wildcards, so they are on here; that they are off by
// default is tested in server-wire.test.ts.
export const OPTS: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'insecure', serial: 1700000000, wildcards: true };

export function port(name: string, num: number, protocol: Protocol = 'TCP'): PortInfo {
  return { name, port: num, protocol };
}

export function clusterIP(namespace: string, name: string, ips: string[], ports: PortInfo[] = []): ServiceInfo {
  return {
    namespace,
    name,
    kind: 'ClusterIP',
    clusterIPs: ips.map(normalizeIp),
    externalName: '',
    ports,
    publishNotReadyAddresses: false,
  };
}

export function headless(namespace: string, name: string, publishNotReadyAddresses = false): ServiceInfo {
  return { namespace, name, kind: 'Headless', clusterIPs: [], externalName: '', ports: [], publishNotReadyAddresses };
}

export function externalName(namespace: string, name: string, target: string): ServiceInfo {
  return { namespace, name, kind: 'ExternalName', clusterIPs: [], externalName: target, ports: [], publishNotReadyAddresses: false };
}

export function ep(ip: string, hostname = '', ready = true): EndpointInfo {
  return { addresses: [normalizeIp(ip)], hostname, ready };
}

export function slice(
  namespace: string,
  name: string,
  serviceName: string,
  endpoints: EndpointInfo[],
  ports: PortInfo[] = [],
): EndpointSliceInfo {
  const v6 = endpoints.some((e) => e.addresses.some((a) => a.includes(':')));
  return { namespace, name, serviceName, addressType: v6 ? 'IPv6' : 'IPv4', ports, endpoints };
}

export function zoneWith(...services: ServiceInfo[]): Zone {
  const z = new Zone();
  for (const s of services) z.setService(s);
  return z;
}

export function q(zone: Zone, name: string, type: string, opts: Partial<ResolveOptions> = {}): Resolution {
  return resolve(zone, name, type, { ...OPTS, ...opts });
}

/** dig-style lines without the trailing-dot noise on owners: `name TTL IN TYPE data`. */
export function lines(section: Answer[]): string[] {
  return section.map((a) => rrText(a).replace(/\t/g, ' ').replace(/^(\S+)\. /, '$1 '));
}

/** The data of the answer records of one type, sorted. */
export function data(r: Resolution, type: string): string[] {
  return r.answers
    .filter((a) => a.type === type)
    .map((a) => rrText(a).split('\t')[4]!)
    .sort();
}

/** A compact summary for table tests: rcode, then the answer data sorted. */
export function summary(r: Resolution): string {
  if (r.action === 'forward') return `forward${r.cluster ? ' cluster' : ''}`;
  const ans = r.answers.map((a) => `${a.type} ${rrText(a).split('\t')[4]}`).sort();
  return [r.rcode, ...ans].join(' | ');
}
