// Compact forms of the API objects: only what the records need (a stock informer cache keeps
// every object whole, which is what makes kube-dns grow with the cluster).

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface PortInfo {
  /** '' for an unnamed port (no SRV record). */
  name: string;
  port: number;
  protocol: Protocol;
}

export type ServiceKind = 'ClusterIP' | 'Headless' | 'ExternalName';

export interface ServiceInfo {
  namespace: string;
  name: string;
  kind: ServiceKind;
  /** Normalised IP literals (ClusterIP kind only), IPv4 and/or IPv6, in spec order. */
  clusterIPs: string[];
  /** ExternalName kind only: lower-case, no trailing dot; may be an IP literal. '' otherwise. */
  externalName: string;
  ports: PortInfo[];
  /** spec.publishNotReadyAddresses or the tolerate-unready-endpoints annotation. */
  publishNotReadyAddresses: boolean;
  /**
   * --external-zone only (absent otherwise, so no memory): status.loadBalancer.ingress IPs, then
   * spec.externalIPs, normalised, once each; and the first ingress hostname ('' when none).
   */
  external?: { ips: string[]; hostname: string };
}

export interface EndpointInfo {
  /** Normalised IP literals of one endpoint (FQDN slices are ignored). */
  addresses: string[];
  /** endpoint.hostname, '' when absent. */
  hostname: string;
  /**
   * The pod behind the endpoint (targetRef), only with --endpoint-pod-names and only when it is a
   * valid DNS label: then it names an endpoint without a hostname. Absent otherwise (no memory).
   */
  podName?: string;
  /** conditions.ready, where absent counts as ready (the EndpointSlice API's rule). */
  ready: boolean;
}

export interface EndpointSliceInfo {
  namespace: string;
  name: string;
  /** The kubernetes.io/service-name label: the service this slice belongs to. */
  serviceName: string;
  addressType: 'IPv4' | 'IPv6';
  ports: PortInfo[];
  endpoints: EndpointInfo[];
}

export interface PodInfo {
  namespace: string;
  name: string;
  /** Normalised status.podIPs. */
  ips: string[];
  /** spec.hostNetwork: its IP is the node's (autopath must not take it for this pod's). */
  hostNetwork?: boolean;
  /** status.phase Succeeded or Failed: the IP it still shows may already be another pod's. */
  finished?: boolean;
}

/** What a zone accepts from the informers. Every method is idempotent. */
export interface ZoneWriter {
  setService(s: ServiceInfo): void;
  deleteService(namespace: string, name: string): void;
  setSlice(s: EndpointSliceInfo): void;
  deleteSlice(namespace: string, name: string): void;
  setPod(p: PodInfo): void;
  deletePod(namespace: string, name: string): void;
}

export type PodMode = 'insecure' | 'verified' | 'disabled';

/**
 * What the response cache needs from a zone. A cached answer records the `dep` its resolution
 * named and the generation of that dep when it was computed; it stays valid while
 * `depGeneration(dep)` is unchanged. Generations only grow (a deleted key keeps a tombstone), so a
 * delete followed by a re-create never revives a stale answer.
 *   dep 'svc/<ns>/<name>': everything under <name>.<ns>.svc.<zone> (its records, its endpoints,
 *                           its SRV names; also a negative answer while it does not exist)
 *   dep '*':               anything that may change with any update (wildcards, PTR, CNAME chase)
 *   dep 'static':          never changes (apex SOA/NS, dns-version, insecure pod names); generation 0
 */
export interface ZoneReader {
  /** Bumped by every change. */
  readonly generation: number;
  depGeneration(dep: string): number;
  /**
   * For a dep that stands for one live object (a service), the object itself: its `gen` is that
   * dep's generation, and turns to -1 for good once the object is replaced or deleted. The cache
   * keeps the cell and compares its `gen`, with no lookup per hit and no map of generations by
   * key string. Undefined for other deps (they go through depGeneration).
   */
  depCell?(dep: string): GenerationCell | undefined;
}

/** A dependency's generation, held by the object it belongs to (ZoneReader.depCell). */
export interface GenerationCell {
  readonly gen: number;
}
