import type { Answer } from 'dns-packet';

export type Rcode = 'NOERROR' | 'FORMERR' | 'SERVFAIL' | 'NXDOMAIN' | 'NOTIMP' | 'REFUSED';

export interface ResolveOptions {
  /** Cluster zone, lower-case, no trailing dot: 'cluster.local'. */
  zone: string;
  /** TTL of records (the --ttl flag, default 30). Also the SOA minimum (negative caching). */
  ttl: number;
  pods: import('../records/types.js').PodMode;
  /** SOA serial. */
  serial: number;
  /**
   * The legacy `*` labels (service, namespace, port, protocol, endpoint). Off by default (the
   * --wildcards flag; CoreDNS dropped them): with them off `*` is an ordinary label that no
   * Kubernetes name can match.
   */
  wildcards?: boolean;
  /**
   * --namespaces / --namespace-labels: whether a namespace is served. Unset (the default) serves
   * all. Services of other namespaces never reach the zone; this is for the names that need no
   * object (insecure pod names, `<ns>.pod`).
   */
  servesNamespace?: (namespace: string) => boolean;
  /** --ignore-empty-service: a ClusterIP service without a ready endpoint is NXDOMAIN (with all below it). */
  ignoreEmptyService?: boolean;
  /** `serial` changes with the zone (--transfer-to): an apex SOA answer depends on every change. */
  dynamicSerial?: boolean;
  /** SOA MNAME; default `ns.dns.<zone>`. */
  mname?: string;
  /** --external-zone (zones/external.ts); unset when none is given. */
  external?: import('../zones/external.js').ExternalZone[];
  /**
   * A stub domain inside the zone covers `lname`: its names are forwarded, not answered from the
   * records (an ExternalName targeting one is chased through its servers). Unset: none.
   */
  forwardedInZone?: (lname: string) => boolean;
}

/**
 * The outcome of resolving one question against the zone. Pure data: the server turns it into
 * bytes (adding ID, question, flags, EDNS, truncation).
 */
export interface Resolution {
  /**
   * 'answer': reply with rcode/aa/sections below.
   * 'forward': not ours (outside the zone, or a reverse name we do not know): send upstream.
   */
  action: 'answer' | 'forward';
  rcode: Rcode;
  aa: boolean;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
  /**
   * An ExternalName CNAME whose target lies outside the zone: the server looks `chase` up
   * upstream (same qtype) and appends the answers after the CNAME. Unset otherwise.
   */
  chase?: string;
  /** True for names in the cluster zone or a reverse zone: before the first sync these get SERVFAIL. */
  cluster: boolean;
  /** See ZoneReader: what this answer depends on, for the response cache. */
  dep: string;
}
