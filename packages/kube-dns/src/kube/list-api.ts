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

export type ListFn<T> = (req: { limit: number; continueToken?: string; signal: AbortSignal }) => Promise<ListPage<T>>;

export type WatchedResource = 'services' | 'endpointslices' | 'pods';

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
};

export function listFunction(kc: KubeConfig, resource: WatchedResource): ListFn<unknown> {
  switch (resource) {
    case 'services': {
      const api = kc.makeApiClient(CoreV1Api);
      return ({ limit, continueToken, signal }) =>
        api.listServiceForAllNamespaces({ limit, ...(continueToken && { _continue: continueToken }) }, withSignal(signal));
    }
    case 'pods': {
      const api = kc.makeApiClient(CoreV1Api);
      return ({ limit, continueToken, signal }) =>
        api.listPodForAllNamespaces({ limit, ...(continueToken && { _continue: continueToken }) }, withSignal(signal));
    }
    case 'endpointslices': {
      const api = kc.makeApiClient(DiscoveryV1Api);
      return ({ limit, continueToken, signal }) =>
        api.listEndpointSliceForAllNamespaces({ limit, ...(continueToken && { _continue: continueToken }) }, withSignal(signal));
    }
  }
}
