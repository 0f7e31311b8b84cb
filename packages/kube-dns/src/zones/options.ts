// The zone options (CoreDNS `kubernetes` plugin counterparts), each off by default so the
// original kube-dns behaviour stays. Flags here; options.ts spreads ZONE_FLAGS and calls
// parseZoneOptions so the whole block merges as one piece.
import { FlagError, type FlagSpecs, type FlagValue, isDns1123Label } from '@kube-dns/config';
import { parseLabelSelector, type LabelSelector } from './label-selector.js';

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
};

export interface ZoneOptions {
  endpointPodNames: boolean;
  /** Empty: every namespace. Sorted, unique, lower-case. */
  namespaces: string[];
  /** Undefined when not given. */
  labels?: LabelSelector;
  namespaceLabels?: LabelSelector;
  ignoreEmptyService: boolean;
}

function selector(flag: string, raw: FlagValue | undefined): LabelSelector | undefined {
  const text = String(raw ?? '').trim();
  if (text === '') return undefined;
  try {
    return parseLabelSelector(text);
  } catch (e) {
    throw new FlagError(`--${flag}=${text}: not a label selector: ${(e as Error).message}`);
  }
}

export function parseZoneOptions(v: Record<string, FlagValue>): ZoneOptions {
  const namespaces = [...new Set(String(v.namespaces ?? '').split(',').map((s) => s.trim()).filter(Boolean))].sort();
  for (const ns of namespaces) {
    if (!isDns1123Label(ns)) throw new FlagError(`--namespaces: ${JSON.stringify(ns)} is not a valid namespace name (a DNS-1123 label)`);
  }
  const labels = selector('labels', v.labels);
  const namespaceLabels = selector('namespace-labels', v['namespace-labels']);
  return {
    endpointPodNames: v['endpoint-pod-names'] === true,
    namespaces,
    ...(labels && { labels }),
    ...(namespaceLabels && { namespaceLabels }),
    ignoreEmptyService: v['ignore-empty-service'] === true,
  };
}
