// API objects (as @kubernetes/client-node delivers them) → compact record inputs. Pure.
import { isIP } from 'node:net';
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import { isDns1123Label } from '@kube-dns/config';
import { fitsInMessage, normalizeIp } from './names.js';
import type { EndpointSliceInfo, PodInfo, PortInfo, Protocol, ServiceInfo } from './types.js';

const TOLERATE_UNREADY = 'service.alpha.kubernetes.io/tolerate-unready-endpoints';
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/**
 * Port lists, one frozen array per distinct list: most Services and slices of a cluster share a
 * handful (`http/80/TCP`), and an array with its PortInfo objects is about 100 bytes a Service.
 * Records are never mutated (zone.ts), so sharing is safe; freezing makes it so. Bounded: past
 * MAX_SHARED_PORT_LISTS distinct lists, new ones are kept unshared.
 */
const sharedPortLists = new Map<string, readonly PortInfo[]>();
const MAX_SHARED_PORT_LISTS = 10_000;
const NO_PORTS: readonly PortInfo[] = Object.freeze([]);

/**
 * A port's name as its SRV label `_<name>` can carry it: an EndpointSlice's port name may be any
 * DNS-1123 label, up to 63 characters, one more than `_<name>` holds (a Service's is at most 15).
 * Such a port is kept unnamed (no SRV): a 64-octet label breaks every message that holds it, the
 * zone transfer's first (its length octet reads as a compression pointer).
 */
const srvName = (name: string | undefined): string => (name && name.length <= MAX_SRV_PORT_NAME ? name.toLowerCase() : '');
const MAX_SRV_PORT_NAME = 62;

function ports(list: { name?: string; port?: number; protocol?: string }[] | undefined): PortInfo[] {
  if (!list || list.length === 0) return NO_PORTS as PortInfo[];
  const out = list
    .filter((p) => typeof p.port === 'number')
    .map((p) => ({ name: srvName(p.name), port: p.port!, protocol: (p.protocol ?? 'TCP').toUpperCase() as Protocol }));
  const key = out.map((p) => [p.name, p.port, p.protocol].join('/')).join(',');
  const shared = sharedPortLists.get(key);
  if (shared) return shared as PortInfo[];
  if (sharedPortLists.size >= MAX_SHARED_PORT_LISTS) return out;
  out.forEach((p) => Object.freeze(p));
  sharedPortLists.set(key, Object.freeze(out));
  return out;
}

function ips(list: (string | undefined)[]): string[] {
  const out: string[] = [];
  for (const ip of list) {
    if (!ip || isIP(ip) === 0) continue;
    const n = normalizeIp(ip);
    if (!out.includes(n)) out.push(n);
  }
  // A copy of exactly its length: the first push() gives an empty array room for 17 elements
  // (152 bytes, where one takes 24), and these lists are kept for the object's life: a Service's
  // cluster IPs, an endpoint's addresses, a pod's IPs (heap snapshot at 10,000 Services: 180
  // bytes a Service).
  return out.length === 0 ? out : out.slice();
}

/** A target name as the records keep it: lower case, no trailing dot; '' when it cannot be written in a message. */
function targetName(name: string | undefined): string {
  const n = (name ?? '').toLowerCase().replace(/\.$/, '');
  return fitsInMessage(n) ? n : '';
}

/** The ExternalName target and ingress hostname of a Service that no answer can carry (logged by kube/sync.ts). */
export function unwritableNames(o: V1Service): string[] {
  const names = o.spec?.type === 'ExternalName' ? [o.spec.externalName] : (o.status?.loadBalancer?.ingress ?? []).map((i) => i.hostname);
  return names.filter((n): n is string => !!n && n !== '.' && targetName(n) === '');
}

/** What the external zone needs of a Service: its addresses reachable from outside the cluster. */
function externalOf(o: V1Service): { ips: string[]; hostname: string } {
  const ingress = o.status?.loadBalancer?.ingress ?? [];
  const hostname = ingress.map((i) => targetName(i.hostname)).find((h) => h !== '') ?? '';
  return { ips: ips([...ingress.map((i) => i.ip), ...(o.spec?.externalIPs ?? [])]), hostname };
}

/** Options of the Service conversion. */
export interface ServiceConversion {
  /** --external-zone: keep LoadBalancer ingress and externalIPs. */
  external?: boolean;
}

export function serviceFromKube(o: V1Service, conv: ServiceConversion = {}): ServiceInfo | undefined {
  const namespace = o.metadata?.namespace;
  const name = o.metadata?.name;
  if (!namespace || !name) return undefined;
  const spec = o.spec ?? {};
  const portList = ports(spec.ports);
  const publishNotReadyAddresses = spec.publishNotReadyAddresses === true || o.metadata?.annotations?.[TOLERATE_UNREADY] === 'true';
  let kind: ServiceInfo['kind'] = 'ClusterIP';
  let clusterIPs: string[] = [];
  let externalName = '';
  const cips = spec.clusterIPs?.length ? spec.clusterIPs : [spec.clusterIP];
  if (spec.type === 'ExternalName') {
    kind = 'ExternalName';
    externalName = targetName(spec.externalName); // one no answer can carry: none (NODATA)
  } else if (!spec.clusterIP || spec.clusterIP === 'None' || cips.every((c) => !c || c === 'None')) {
    kind = 'Headless';
  } else {
    clusterIPs = ips(cips);
  }
  const ext = conv.external && kind !== 'ExternalName' ? externalOf(o) : undefined;
  // One object literal per shape, never a spread: every ServiceInfo then shares V8's hidden class
  // of its literal. Built with spreads ({ ...base, kind }), each object got a hidden class (and
  // descriptor array) of its own: about 300 bytes per Service, 6 MB at 20,000 (heap snapshot).
  if (ext && (ext.ips.length > 0 || ext.hostname !== '')) {
    return { namespace, name, kind, clusterIPs, externalName, ports: portList, publishNotReadyAddresses, external: ext };
  }
  return { namespace, name, kind, clusterIPs, externalName, ports: portList, publishNotReadyAddresses };
}

/** Options of the conversion (zone flags that change what is kept of an object). */
export interface SliceConversion {
  /** --endpoint-pod-names: keep the pod name of endpoints without a hostname. */
  podNames?: boolean;
}

/** The pod name of an endpoint, when it is a pod and its name can be a DNS label. */
function podLabel(e: { hostname?: string; targetRef?: { kind?: string; name?: string } }): string | undefined {
  if (e.hostname || e.targetRef?.kind !== 'Pod' || !e.targetRef.name) return undefined;
  const name = e.targetRef.name.toLowerCase();
  return isDns1123Label(name) ? name : undefined;
}

export function sliceFromKube(o: V1EndpointSlice, conv: SliceConversion = {}): EndpointSliceInfo | undefined {
  const namespace = o.metadata?.namespace;
  const name = o.metadata?.name;
  const serviceName = o.metadata?.labels?.[SERVICE_NAME_LABEL];
  if (!namespace || !name || !serviceName) return undefined;
  if (o.addressType !== 'IPv4' && o.addressType !== 'IPv6') return undefined; // FQDN slices carry no IPs
  return {
    namespace,
    name,
    serviceName,
    addressType: o.addressType,
    ports: ports(o.ports as { name?: string; port?: number; protocol?: string }[] | undefined),
    endpoints: (o.endpoints ?? []).map((e) => {
      const podName = conv.podNames ? podLabel(e) : undefined;
      const addresses = ips(e.addresses ?? []);
      const hostname = (e.hostname ?? '').toLowerCase();
      const ready = e.conditions?.ready !== false;
      // literals, not a spread: one hidden class for every endpoint (see serviceFromKube)
      return podName === undefined ? { addresses, hostname, ready } : { addresses, hostname, podName, ready };
    }),
  };
}

export function podFromKube(o: V1Pod): PodInfo | undefined {
  const namespace = o.metadata?.namespace;
  const name = o.metadata?.name;
  if (!namespace || !name) return undefined;
  const list = o.status?.podIPs?.length ? o.status.podIPs.map((p) => p.ip) : [o.status?.podIP];
  const phase = o.status?.phase;
  return { namespace, name, ips: ips(list), hostNetwork: o.spec?.hostNetwork === true, finished: phase === 'Succeeded' || phase === 'Failed' };
}
