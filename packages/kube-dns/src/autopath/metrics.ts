// kubedns_autopath_total{result}: what autopath did with each NXDOMAIN inside the first search
// domain (and why it gave the plain answer when it did).
import client, { type Registry } from 'prom-client';

export const AUTOPATH_RESULTS = [
  'cluster', // answered by a later cluster search name (CNAME to it + its records)
  'upstream', // answered by the name itself, or a node search domain, from upstream
  // the first name that exists has no records of the asked type: NODATA, no CNAME. Nothing is
  // completed: the pod asks its next search names itself (unless its A or AAAA twin got records)
  'nodata',
  'not_found', // no candidate exists: the plain NXDOMAIN
  'upstream_error', // an upstream candidate failed: the plain NXDOMAIN
  'timeout', // the walk's 2 s ran out (upstreams slow): the plain NXDOMAIN, the pod asks on by itself
  // a later search name is in the ConfigMap's `hosts`, which dnsmasq answers (an override of the
  // upstream's address, maybe): the plain NXDOMAIN, the pod's search gets there through dnsmasq
  'hosts_name',
  // a later name of a search a walk just left to this pod (`redis.N.svc.<zone>` after
  // `redis.N.N.svc.<zone>` for `redis.N`): the pod's own search, not a new lookup. Plain NXDOMAIN
  'later_search_name',
  'no_client_subnet', // the query carried no client address (dnsmasq without --add-subnet)
  'untrusted_subnet', // a client-subnet option from a source other than loopback: ignored
  'malformed_subnet', // a client-subnet option that is not valid: ignored
  'partial_subnet', // a subnet shorter than one address (e.g. --add-subnet=24): not one pod
  'unknown_pod', // no running pod has the client's IP
  'host_network', // the client IP is a hostNetwork pod's (the node's)
  'ambiguous_pod', // pods of two namespaces have the client's IP
  'other_namespace', // the asked name is in another namespace's search path than the client's
] as const;
export type AutopathResult = (typeof AUTOPATH_RESULTS)[number];

const INDEX = new Map<AutopathResult, number>(AUTOPATH_RESULTS.map((r, i) => [r, i]));

export function registerAutopathMetrics(r: Registry): (result: AutopathResult) => void {
  // Counted in a plain array on the query path (a prom-client inc() per NXDOMAIN costs more than
  // the rest of the decision) and handed to prom-client when scraped.
  const counts = new Float64Array(AUTOPATH_RESULTS.length);
  const reported = new Float64Array(AUTOPATH_RESULTS.length);
  new client.Counter({
    name: 'kubedns_autopath_total',
    help: 'Questions autopath considered (NXDOMAIN for <name>.<namespace>.svc.<zone>), by what it did: completed (cluster, upstream), NODATA that completes nothing (nodata), or the plain NXDOMAIN and why (the other results; later_search_name: a later name of a search the pod walks itself, not a new lookup).',
    labelNames: ['result'],
    registers: [r],
    collect() {
      // every label from the first scrape on, so a rate() over a result not seen yet is 0, not absent
      for (let i = 0; i < counts.length; i++) {
        this.inc({ result: AUTOPATH_RESULTS[i]! }, counts[i]! - reported[i]!);
        reported[i] = counts[i]!;
      }
    },
  });
  return (result) => {
    counts[INDEX.get(result)!]!++;
  };
}
