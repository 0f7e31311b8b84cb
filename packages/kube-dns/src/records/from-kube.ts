// API objects (as @kubernetes/client-node delivers them) → compact record inputs. Pure.
import { isIP } from 'node:net';
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
import { isDns1123Label } from '@kube-dns/config';
import { normalizeIp } from './names.js';
import type { EndpointSliceInfo, PodInfo, PortInfo, Protocol, ServiceInfo } from './types.js';

const TOLERATE_UNREADY = 'service.alpha.kubernetes.io/tolerate-unready-endpoints';
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

function ports(list: { name?: string; port?: number; protocol?: string }[] | undefined): PortInfo[] {
  return (list ?? [])
    .filter((p) => typeof p.port === 'number')
    .map((p) => ({ name: (p.name ?? '').toLowerCase(), port: p.port!, protocol: ((p.protocol ?? 'TCP').toUpperCase() as Protocol) }));
}

function ips(list: (string | undefined)[]): string[] {
  const out: string[] = [];
  for (const ip of list) {
    if (!ip || isIP(ip) === 0) continue;
    const n = normalizeIp(ip);
    if (!out.includes(n)) out.push(n);
  }
  return out;
}

/** What the external zone needs of a Service: its addresses reachable from outside the cluster. */
function externalOf(o: V1Service): { ips: string[]; hostname: string } {
  const ingress = o.status?.loadBalancer?.ingress ?? [];
  const hostname = (ingress.find((i) => i.hostname)?.hostname ?? '').toLowerCase().replace(/\.$/, '');
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
  const ext = conv.external && spec.type !== 'ExternalName' ? externalOf(o) : undefined;
  const base = {
    ...(ext && (ext.ips.length > 0 || ext.hostname !== '') && { external: ext }),
    namespace,
    name,
    ports: ports(spec.ports),
    publishNotReadyAddresses: spec.publishNotReadyAddresses === true || o.metadata?.annotations?.[TOLERATE_UNREADY] === 'true',
    clusterIPs: [] as string[],
    externalName: '',
  };
  if (spec.type === 'ExternalName') {
    const ext = (spec.externalName ?? '').toLowerCase().replace(/\.$/, '');
    return { ...base, kind: 'ExternalName', externalName: ext };
  }
  const cips = spec.clusterIPs?.length ? spec.clusterIPs : [spec.clusterIP];
  if (!spec.clusterIP || spec.clusterIP === 'None' || cips.every((c) => !c || c === 'None')) {
    return { ...base, kind: 'Headless' };
  }
  return { ...base, kind: 'ClusterIP', clusterIPs: ips(cips) };
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
      return {
        addresses: ips(e.addresses ?? []),
        hostname: (e.hostname ?? '').toLowerCase(),
        ...(podName !== undefined && { podName }),
        ready: e.conditions?.ready !== false,
      };
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
