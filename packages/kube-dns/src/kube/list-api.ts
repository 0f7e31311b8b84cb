// The list calls of the resources kube-dns watches, through @kubernetes/client-node's generated
// API classes, with an abort signal (stop, per-request timeout) the generated API lacks.
import {
  CoreV1Api,
  DiscoveryV1Api,
  type ConfigurationOptions,
  type KubeConfig,
  Observable,
  type ObservableMiddleware,
  type RequestContext,
  type ResponseContext,
} from '@kubernetes/client-node';

/** One page of a list: what the reflector needs of a V1*List. */
export interface ListPage<T> {
  items: T[];
  metadata?: { resourceVersion?: string; _continue?: string };
}

/**
 * `limit` 0: no paging, the whole list in one response (the API server reads limit=0 as unset).
 * `resourceVersion` (first pages only; a later page's version is its continue token's):
 * '' or absent = the latest (a quorum read), '0' = any (the API server's watch cache),
 * 'N' = not older than N without a limit, exactly N with one.
 */
export interface ListRequest {
  limit: number;
  continueToken?: string;
  resourceVersion?: string;
  signal: AbortSignal;
}
export type ListFn<T> = (req: ListRequest) => Promise<ListPage<T>>;

/** The paging and version parameters of one list call, as the generated client names them. */
function pageParams({ limit, continueToken, resourceVersion }: ListRequest) {
  if (continueToken !== undefined) return { limit, _continue: continueToken };
  return { limit, ...(resourceVersion && { resourceVersion }) };
}

export type WatchedResource = 'services' | 'endpointslices' | 'pods' | 'namespaces';

function withSignal(signal: AbortSignal): ConfigurationOptions {
  // The object-parameter API runs observable middleware (client-node's small Observable stub).
  const mw: ObservableMiddleware = {
    pre: (ctx: RequestContext) => {
      ctx.setSignal(signal);
      return new Observable(Promise.resolve(ctx));
    },
    post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
  };
  return { middleware: [mw], middlewareMergeStrategy: 'append' };
}

/** Cluster-wide collection path, as the watch uses it. */
export const WATCH_PATHS: Record<WatchedResource, string> = {
  services: '/api/v1/services',
  endpointslices: '/apis/discovery.k8s.io/v1/endpointslices',
  pods: '/api/v1/pods',
  namespaces: '/api/v1/namespaces',
};

/** The watch path of a resource in one namespace (--namespaces), or cluster-wide. */
export function watchPath(resource: WatchedResource, namespace?: string): string {
  if (namespace === undefined || resource === 'namespaces') return WATCH_PATHS[resource];
  const base = resource === 'endpointslices' ? '/apis/discovery.k8s.io/v1' : '/api/v1';
  return `${base}/namespaces/${encodeURIComponent(namespace)}/${resource}`;
}

/**
 * `labelSelector` (services only, --labels): the API server filters, so Services left out are
 * never sent; a Service relabelled out of the selection arrives as DELETED on the watch.
 */
export function listFunction(kc: KubeConfig, resource: WatchedResource, namespace?: string, labelSelector?: string): ListFn<unknown> {
  if (namespace !== undefined && resource !== 'namespaces') return namespacedListFunction(kc, resource, namespace, labelSelector);
  const sel = resource === 'services' && labelSelector ? { labelSelector } : {};
  switch (resource) {
    case 'services': {
      const api = kc.makeApiClient(CoreV1Api);
      return (req) => api.listServiceForAllNamespaces({ ...pageParams(req), ...sel }, withSignal(req.signal));
    }
    case 'pods': {
      const api = kc.makeApiClient(CoreV1Api);
      return (req) => api.listPodForAllNamespaces(pageParams(req), withSignal(req.signal));
    }
    case 'endpointslices': {
      const api = kc.makeApiClient(DiscoveryV1Api);
      return (req) => api.listEndpointSliceForAllNamespaces(pageParams(req), withSignal(req.signal));
    }
    case 'namespaces': {
      const api = kc.makeApiClient(CoreV1Api);
      return (req) => api.listNamespace(pageParams(req), withSignal(req.signal));
    }
  }
}

/** --namespaces: each served namespace is listed and watched on its own; others are never fetched. */
function namespacedListFunction(kc: KubeConfig, resource: Exclude<WatchedResource, 'namespaces'>, namespace: string, labelSelector?: string): ListFn<unknown> {
  const sel = resource === 'services' && labelSelector ? { labelSelector } : {};
  const page = (req: ListRequest) => ({ namespace, ...pageParams(req), ...sel });
  switch (resource) {
    case 'services': {
      const api = kc.makeApiClient(CoreV1Api);
      return (req) => api.listNamespacedService(page(req), withSignal(req.signal));
    }
    case 'pods': {
      const api = kc.makeApiClient(CoreV1Api);
      return (req) => api.listNamespacedPod(page(req), withSignal(req.signal));
    }
    case 'endpointslices': {
      const api = kc.makeApiClient(DiscoveryV1Api);
      return (req) => api.listNamespacedEndpointSlice(page(req), withSignal(req.signal));
    }
  }
}
