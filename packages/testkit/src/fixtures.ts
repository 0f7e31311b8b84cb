// Builders of the API objects kube-dns reads, typed as @kubernetes/client-node delivers them.
// Feed them to the fake API server (`upsert('services', clusterIPService(...))`) or to pure code.
import { isIP } from 'node:net';
import type { V1EndpointSlice, V1Namespace, V1Pod, V1Service, V1ServicePort } from '@kubernetes/client-node';

export interface PortSpec {
  name?: string;
  port: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
}

function servicePorts(ports: PortSpec[]): V1ServicePort[] {
  return ports.map((p) => ({ ...(p.name !== undefined && { name: p.name }), port: p.port, protocol: p.protocol ?? 'TCP' }));
}

function ipFamily(ip: string): 'IPv4' | 'IPv6' {
  return ip.includes(':') ? 'IPv6' : 'IPv4';
}

/** A ClusterIP service with one IP per family (dual-stack when given both). */
export function clusterIPService(namespace: string, name: string, ips: string[], ports: PortSpec[] = []): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec: {
      type: 'ClusterIP',
      clusterIP: ips[0] ?? '',
      clusterIPs: [...ips],
      ipFamilies: ips.map(ipFamily),
      ports: servicePorts(ports),
    },
  };
}

/** A headless service (clusterIP None): its records come from its EndpointSlices. */
export function headlessService(
  namespace: string,
  name: string,
  ports: PortSpec[] = [],
  opts: { publishNotReadyAddresses?: boolean } = {},
): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec: {
      type: 'ClusterIP',
      clusterIP: 'None',
      clusterIPs: ['None'],
      ports: servicePorts(ports),
      ...(opts.publishNotReadyAddresses !== undefined && { publishNotReadyAddresses: opts.publishNotReadyAddresses }),
    },
  };
}

export function externalNameService(namespace: string, name: string, target: string, ports: PortSpec[] = []): V1Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { namespace, name },
    spec: { type: 'ExternalName', externalName: target, ports: servicePorts(ports) },
  };
}

export interface EndpointSpec {
  ip?: string;
  ips?: string[];
  hostname?: string;
  /** conditions.ready; omitted when undefined (which the API treats as ready). */
  ready?: boolean;
  nodeName?: string;
  /** targetRef to a Pod of this name (as the EndpointSlice controller sets it). */
  pod?: string;
}

/** An EndpointSlice of `service` (labelled kubernetes.io/service-name, as the controller does). */
export function endpointSlice(
  namespace: string,
  service: string,
  sliceName: string,
  addressType: 'IPv4' | 'IPv6' | 'FQDN',
  endpoints: EndpointSpec[],
  ports: PortSpec[] = [],
): V1EndpointSlice {
  return {
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: {
      namespace,
      name: sliceName,
      labels: { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' },
    },
    addressType,
    endpoints: endpoints.map((e) => ({
      addresses: e.ips ?? (e.ip !== undefined ? [e.ip] : []),
      ...(e.hostname !== undefined && { hostname: e.hostname }),
      ...(e.ready !== undefined && { conditions: { ready: e.ready } }),
      ...(e.nodeName !== undefined && { nodeName: e.nodeName }),
      ...(e.pod !== undefined && { targetRef: { kind: 'Pod', namespace, name: e.pod } }),
    })),
    ports: ports.map((p) => ({ ...(p.name !== undefined && { name: p.name }), port: p.port, protocol: p.protocol ?? 'TCP' })),
  };
}

/** A running pod with the given IPs (status.podIP = the first). */
export function pod(namespace: string, name: string, ips: string[]): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { namespace, name },
    spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
    status: {
      phase: 'Running',
      ...(ips[0] !== undefined && { podIP: ips[0] }),
      podIPs: ips.map((ip) => ({ ip })),
    },
  };
}

/** A Namespace with the given labels (kube-apiserver adds kubernetes.io/metadata.name itself). */
export function namespaceObject(name: string, labels: Record<string, string> = {}): V1Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name, ...labels } },
    status: { phase: 'Active' },
  };
}

/** A copy of an object with these labels added (e.g. a Service for --labels). */
export function withLabels<T extends { metadata?: { labels?: Record<string, string> } }>(o: T, labels: Record<string, string>): T {
  return { ...o, metadata: { ...o.metadata, labels: { ...o.metadata?.labels, ...labels } } };
}

/**
 * A Service of type LoadBalancer (or ClusterIP with `externalIPs` only) as seen once the cloud
 * controller assigned its ingress: `ingress` items are IPs or host names.
 */
export function externalService(
  namespace: string,
  name: string,
  clusterIP: string,
  o: { ingress?: string[]; externalIPs?: string[]; ports?: PortSpec[] },
): V1Service {
  const base = clusterIPService(namespace, name, [clusterIP], o.ports ?? []);
  return {
    ...base,
    spec: { ...base.spec, type: o.ingress ? 'LoadBalancer' : 'ClusterIP', ...(o.externalIPs && { externalIPs: o.externalIPs }) },
    status: { loadBalancer: { ingress: (o.ingress ?? []).map((i) => (isIP(i) ? { ip: i } : { hostname: i })) } },
  };
}
