// The zone options (CoreDNS `kubernetes` plugin counterparts), each off by default so the
// original kube-dns behaviour stays. Flags here; options.ts spreads ZONE_FLAGS and calls
// parseZoneOptions so the whole block merges as one piece.
import { FlagError, type FlagSpecs, type FlagValue, isDns1123Label, isDns1123Subdomain } from '@kube-dns/config';
import { parseLabelSelector, type LabelSelector } from './label-selector.js';
import { parseTransferTo, type TransferAcl } from '../transfer/acl.js';

export const ZONE_FLAGS: FlagSpecs = {
  'endpoint-pod-names': {
    type: 'bool',
    default: false,
    help: 'name a headless service endpoint without a hostname after its pod (EndpointSlice targetRef) when that is a valid DNS label, instead of its dashed IP',
  },
  namespaces: { type: 'string', default: '', help: 'comma-separated namespaces to serve (others are NXDOMAIN and not watched); default: all' },
  labels: { type: 'string', default: '', help: 'label selector: serve only Services whose labels match (e.g. "tier!=internal,app in (a,b)")' },
  'namespace-labels': { type: 'string', default: '', help: 'label selector: serve only namespaces whose labels match (watches Namespaces)' },
  'ignore-empty-service': { type: 'bool', default: false, help: 'NXDOMAIN for a ClusterIP service name while it has no ready endpoint' },
  'external-zone': {
    type: 'strings',
    default: [],
    help: 'answer <svc>.<ns>.<zone> with the LoadBalancer ingress and externalIPs of Services (repeatable, or comma-separated)',
  },
  'transfer-to': {
    type: 'string',
    default: '',
    help: 'allow AXFR of the cluster and external zones (TCP) from these CIDRs and IP[:port]s, comma-separated; the IP[:port]s also get NOTIFY on change',
  },
  'external-ns': { type: 'string', default: '', help: 'NS of the external zones\' apex (default ns1.dns.<zone>)' },
  'external-ttl': {
    type: 'int',
    help: 'TTL of the external zones\' records and their SOA minimum, in seconds (default: --ttl; the manifest\'s --ttl=0 keeps outside resolvers from caching anything)',
  },
};

export interface ZoneOptions {
  endpointPodNames: boolean;
  /** Empty: every namespace. Sorted, unique, lower-case. */
  namespaces: string[];
  /** Undefined when not given. */
  labels?: LabelSelector;
  namespaceLabels?: LabelSelector;
  ignoreEmptyService: boolean;
  /** Lower-case, no trailing dot. */
  externalZones: string[];
  /** Lower-case, no trailing dot; undefined: ns1.dns.<zone>. */
  externalNs?: string;
  /** Seconds; undefined: --ttl. */
  externalTtl?: number;
  /** --transfer-to; undefined: zone transfer off. */
  transfer?: TransferAcl;
}

function hostName(flag: string, raw: string): string {
  const name = raw.trim().replace(/\.$/, '').toLowerCase();
  if (!isDns1123Subdomain(name)) throw new FlagError(`--${flag}=${raw}: not a valid DNS name`);
  return name;
}

const within = (name: string, zone: string): boolean => name === zone || name.endsWith(`.${zone}`);

function selector(flag: string, raw: FlagValue | undefined): LabelSelector | undefined {
  const text = String(raw ?? '').trim();
  if (text === '') return undefined;
  try {
    return parseLabelSelector(text);
  } catch (e) {
    throw new FlagError(`--${flag}=${text}: not a label selector: ${(e as Error).message}`);
  }
}

/** `clusterDomain`: the --domain, lower-case without the trailing dot (an external zone may not overlap it). */
export function parseZoneOptions(v: Record<string, FlagValue>, clusterDomain: string): ZoneOptions {
  const namespaces = [...new Set(String(v.namespaces ?? '').split(',').map((s) => s.trim()).filter(Boolean))].sort();
  for (const ns of namespaces) {
    if (!isDns1123Label(ns)) throw new FlagError(`--namespaces: ${JSON.stringify(ns)} is not a valid namespace name (a DNS-1123 label)`);
  }
  const labels = selector('labels', v.labels);
  const namespaceLabels = selector('namespace-labels', v['namespace-labels']);
  const externalZones: string[] = [];
  for (const raw of ((v['external-zone'] ?? []) as string[]).flatMap((x) => x.split(',')).filter((x) => x.trim() !== '')) {
    const z = hostName('external-zone', raw);
    if (within(z, clusterDomain) || within(clusterDomain, z)) throw new FlagError(`--external-zone=${raw}: overlaps the cluster domain ${clusterDomain}`);
    if (z === 'arpa' || z.endsWith('.arpa')) throw new FlagError(`--external-zone=${raw}: reverse zones are the cluster's`);
    const clash = externalZones.find((o) => within(z, o) || within(o, z));
    if (clash !== undefined) throw new FlagError(`--external-zone=${raw}: overlaps --external-zone=${clash}`);
    externalZones.push(z);
  }
  const nsRaw = String(v['external-ns'] ?? '').trim();
  const externalNs = nsRaw ? hostName('external-ns', nsRaw) : undefined;
  const externalTtl = v['external-ttl'] === undefined ? undefined : Number(v['external-ttl']);
  if (externalTtl !== undefined && (externalTtl < 0 || externalTtl > 2_147_483_647)) throw new FlagError(`--external-ttl=${externalTtl}: must be 0 or more seconds`);
  const transferRaw = String(v['transfer-to'] ?? '').trim();
  let transfer: TransferAcl | undefined;
  if (transferRaw) {
    try {
      transfer = parseTransferTo(transferRaw);
    } catch (e) {
      throw new FlagError(`--transfer-to=${transferRaw}: ${(e as Error).message}`);
    }
  }
  return {
    ...(transfer && { transfer }),
    externalZones,
    ...(externalNs !== undefined && { externalNs }),
    ...(externalTtl !== undefined && { externalTtl }),
    endpointPodNames: v['endpoint-pod-names'] === true,
    namespaces,
    ...(labels && { labels }),
    ...(namespaceLabels && { namespaceLabels }),
    ignoreEmptyService: v['ignore-empty-service'] === true,
  };
}
