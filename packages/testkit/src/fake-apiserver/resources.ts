// The resources the fake API server knows, and how their URLs look on a real kube-apiserver.

export type ResourceName = 'services' | 'pods' | 'configmaps' | 'endpointslices' | 'events' | 'namespaces';

export interface ResourceInfo {
  name: ResourceName;
  /** '' for the core group (served under /api/v1). */
  group: string;
  version: string;
  kind: string;
  /** apiVersion as written in objects: 'v1' or 'discovery.k8s.io/v1'. */
  apiVersion: string;
  /** Cluster-scoped (Namespaces): objects carry no metadata.namespace. */
  clusterScoped?: boolean;
}

export const RESOURCES: Record<ResourceName, ResourceInfo> = {
  services: { name: 'services', group: '', version: 'v1', kind: 'Service', apiVersion: 'v1' },
  pods: { name: 'pods', group: '', version: 'v1', kind: 'Pod', apiVersion: 'v1' },
  configmaps: { name: 'configmaps', group: '', version: 'v1', kind: 'ConfigMap', apiVersion: 'v1' },
  namespaces: { name: 'namespaces', group: '', version: 'v1', kind: 'Namespace', apiVersion: 'v1', clusterScoped: true },
  events: { name: 'events', group: '', version: 'v1', kind: 'Event', apiVersion: 'v1' },
  endpointslices: {
    name: 'endpointslices',
    group: 'discovery.k8s.io',
    version: 'v1',
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
  },
};

export function isResourceName(s: string): s is ResourceName {
  return Object.hasOwn(RESOURCES, s);
}

/** What a request path addresses. namespace/name are undefined for cluster-wide / collection paths. */
export interface ParsedPath {
  resource: ResourceInfo;
  namespace?: string;
  name?: string;
}

/**
 * Parses `/api/v1[/namespaces/<ns>]/<resource>[/<name>]` and
 * `/apis/<group>/<version>[/namespaces/<ns>]/<resource>[/<name>]`; undefined for anything else.
 */
export function parseResourcePath(pathname: string): ParsedPath | undefined {
  const parts = pathname.split('/').filter((p) => p !== '').map(decodeURIComponent);
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') {
    group = '';
    version = parts[1] ?? '';
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    group = parts[1] ?? '';
    version = parts[2] ?? '';
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  let namespace: string | undefined;
  if (rest[0] === 'namespaces' && rest.length >= 3) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  const [res, name, ...extra] = rest;
  if (!res || extra.length > 0 || !isResourceName(res)) return undefined;
  const info = RESOURCES[res];
  if (info.group !== group || info.version !== version) return undefined;
  return { resource: info, ...(namespace !== undefined && { namespace }), ...(name !== undefined && { name }) };
}

/** The collection path of a resource, as clients list and watch it. */
export function collectionPath(resource: ResourceName, namespace?: string): string {
  const r = RESOURCES[resource];
  const base = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  return namespace ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.name}` : `${base}/${r.name}`;
}
