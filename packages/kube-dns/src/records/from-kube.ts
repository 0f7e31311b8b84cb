// API objects (as @kubernetes/client-node delivers them) → compact record inputs. Pure.
import { isIP } from 'node:net';
import type { V1EndpointSlice, V1Pod, V1Service } from '@kubernetes/client-node';
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

export function serviceFromKube(o: V1Service): ServiceInfo | undefined {
  const namespace = o.metadata?.namespace;
  const name = o.metadata?.name;
  if (!namespace || !name) return undefined;
  const spec = o.spec ?? {};
  const base = {
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

export function sliceFromKube(o: V1EndpointSlice): EndpointSliceInfo | undefined {
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
    endpoints: (o.endpoints ?? []).map((e) => ({
      addresses: ips(e.addresses ?? []),
      hostname: (e.hostname ?? '').toLowerCase(),
      ready: e.conditions?.ready !== false,
    })),
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
