// Services, EndpointSlices and (optionally) Pods from the API server into the zone. The zone
// keeps serving the last known records whatever happens to the API server; this only ever logs
// and retries.
import { EventEmitter } from 'node:events';
import type { KubeConfig, V1EndpointSlice, V1Namespace, V1Service } from '@kubernetes/client-node';
import type { Logger } from '@kube-dns/config';
import { podFromKube, serviceFromKube, sliceFromKube, unwritableNames, type ServiceConversion, type SliceConversion } from '../records/from-kube.js';
import type { ZoneWriter } from '../records/types.js';
import { matchesLabels, type LabelSelector } from '../zones/label-selector.js';
import type { NamespaceGate } from '../zones/namespace-gate.js';
import type { BackoffOptions } from './backoff.js';
import type { Clock } from './clock.js';
import { listFunction, watchPath, type ListFn, type WatchedResource } from './list-api.js';
import { Reflector, type ReflectorHandler, type ReflectorStats } from './reflector.js';

export interface KubeSyncOptions {
  kc: KubeConfig;
  zone: ZoneWriter;
  /** Pod records in 'verified' mode need pods; 'insecure' (the default) does not. */
  watchPods: boolean;
  /** What the EndpointSlice conversion keeps (--endpoint-pod-names). */
  sliceConversion?: SliceConversion;
  /** What the Service conversion keeps (--external-zone). */
  serviceConversion?: ServiceConversion;
  /** --namespaces: list and watch only these (one list/watch per namespace and resource). */
  namespaces?: readonly string[];
  /** --labels: Services whose labels do not match are left out (and removed when they stop matching). */
  serviceLabels?: LabelSelector;
  /** --namespace-labels: Namespaces are watched and fed to this gate (which is also `zone`). */
  namespaceGate?: NamespaceGate;
  log: Logger;
  clock?: Clock;
  pageSize?: number;
  backoff?: Partial<BackoffOptions>;
  listTimeoutMs?: number;
  watchTimeoutSeconds?: { min: number; max: number };
  /** See ReflectorOptions. */
  watchIdleMs?: number;
  maxRetryAfterMs?: number;
}

export type KubeSyncStats = Partial<Record<WatchedResource, ReflectorStats>>;

/**
 * Applies objects through a converter. An object the converter rejects (e.g. a slice that lost
 * its service-name label) may have been valid before: remove what it produced.
 */
function converting<T, I>(convert: (o: T) => I | undefined, set: (info: I) => void, remove: (ns: string, name: string) => void): ReflectorHandler<unknown> {
  return {
    upsert(o) {
      const info = convert(o as T);
      const m = (o as { metadata?: { namespace?: string; name?: string } }).metadata;
      if (info) set(info);
      else if (m?.name) remove(m.namespace ?? '', m.name);
    },
    delete: remove,
  };
}

function handlerFor(resource: WatchedResource, o: KubeSyncOptions): ReflectorHandler<unknown> {
  const zone = o.zone;
  switch (resource) {
    case 'services': {
      const sel = o.serviceLabels;
      const conv = o.serviceConversion ?? {};
      // a Service that stops matching --labels converts to nothing: converting() removes it
      const convert = (s: V1Service) => {
        if (sel && !matchesLabels(sel, s.metadata?.labels)) return undefined;
        const info = serviceFromKube(s, conv);
        // only where a name may have been left out: an ExternalName without a target, a Service without an ingress hostname
        if (info && (info.kind === 'ExternalName' ? info.externalName === '' : conv.external === true && !info.external?.hostname)) {
          const names = unwritableNames(s);
          if (names.length > 0) {
            o.log.warn({ service: `${info.namespace}/${info.name}`, names }, 'a target name with a label over 63 octets (or over 253 in all) cannot be answered: left out');
          }
        }
        return info;
      };
      return converting(convert, (s) => zone.setService(s), (ns, name) => zone.deleteService(ns, name));
    }
    case 'endpointslices': {
      const conv = o.sliceConversion ?? {};
      return converting((s: V1EndpointSlice) => sliceFromKube(s, conv), (s) => zone.setSlice(s), (ns, name) => zone.deleteSlice(ns, name));
    }
    case 'pods':
      return converting(podFromKube, (p) => zone.setPod(p), (ns, name) => zone.deletePod(ns, name));
    case 'namespaces': {
      const gate = o.namespaceGate!;
      return {
        upsert: (n) => {
          const m = (n as V1Namespace).metadata;
          if (m?.name) gate.setNamespace(m.name, m.labels);
        },
        delete: (_ns, name) => gate.deleteNamespace(name),
      };
    }
  }
}

/** Per-resource figures summed over the per-namespace reflectors (--namespaces). */
function combine(list: ReflectorStats[]): ReflectorStats {
  const first = list[0]!;
  if (list.length === 1) return first;
  const maxOf = (xs: (number | null)[]): number | null => (xs.some((x) => x === null) ? null : Math.max(...(xs as number[])));
  return {
    objects: list.reduce((n, s) => n + s.objects, 0),
    relists: list.reduce((n, s) => n + s.relists, 0),
    watchRestarts: list.reduce((n, s) => n + s.watchRestarts, 0),
    errors: list.reduce((n, s) => n + s.errors, 0),
    lastEventAt: Math.max(...list.map((s) => s.lastEventAt ?? 0)) || null,
    // the oldest list is the one that matters for staleness; null until every namespace listed
    lastSyncAt: list.some((s) => s.lastSyncAt === null) ? null : Math.min(...list.map((s) => s.lastSyncAt!)),
    // likewise: the namespace heard from longest ago
    lastHeardAt: list.some((s) => s.lastHeardAt === null) ? null : Math.min(...list.map((s) => s.lastHeardAt!)),
    synced: list.every((s) => s.synced),
    resourceVersion: maxOf(list.map((s) => (s.resourceVersion ? Number(s.resourceVersion) : null)))?.toString() ?? '',
    lastError: list.find((s) => s.lastError !== null)?.lastError ?? null,
  };
}

/** Events: 'synced' once every reflector finished its first list. */
export class KubeSync extends EventEmitter {
  /** Key: the resource, or '<resource>/<namespace>' with --namespaces. */
  private readonly reflectors = new Map<string, Reflector<never>>();
  private readonly byResource = new Map<WatchedResource, Reflector<never>[]>();
  private started = false;
  private isSynced = false;

  constructor(private readonly o: KubeSyncOptions) {
    super();
    const resources: WatchedResource[] = [
      ...(o.namespaceGate ? (['namespaces'] as const) : []),
      'services',
      'endpointslices',
      ...(o.watchPods ? (['pods'] as const) : []),
    ];
    const scopes: (string | undefined)[] = o.namespaces?.length ? [...o.namespaces] : [undefined];
    for (const resource of resources) {
      for (const namespace of resource === 'namespaces' ? [undefined] : scopes) this.addReflector(resource, namespace);
    }
  }

  private addReflector(resource: WatchedResource, namespace: string | undefined): void {
    const o = this.o;
    // --labels: filtered by the API server too (only selected Services travel and are tracked)
    const labelSelector = resource === 'services' ? o.serviceLabels?.text : undefined;
    const r = new Reflector<never>({
        resource: namespace === undefined ? resource : `${resource}/${namespace}`,
        kc: o.kc,
        watchPath: watchPath(resource, namespace),
        ...(labelSelector && { labelSelector }),
        list: listFunction(o.kc, resource, namespace, labelSelector) as ListFn<never>,
        handler: handlerFor(resource, o),
        log: o.log,
        ...(o.clock && { clock: o.clock }),
        ...(o.pageSize !== undefined && { pageSize: o.pageSize }),
        ...(o.backoff && { backoff: o.backoff }),
        ...(o.listTimeoutMs !== undefined && { listTimeoutMs: o.listTimeoutMs }),
        ...(o.watchTimeoutSeconds && { watchTimeoutSeconds: o.watchTimeoutSeconds }),
        ...(o.watchIdleMs !== undefined && { watchIdleMs: o.watchIdleMs }),
        ...(o.maxRetryAfterMs !== undefined && { maxRetryAfterMs: o.maxRetryAfterMs }),
      });
    r.once('synced', () => this.checkSynced());
    this.reflectors.set(namespace === undefined ? resource : `${resource}/${namespace}`, r);
    const same = this.byResource.get(resource);
    if (same) same.push(r);
    else this.byResource.set(resource, [r]);
  }

  /** True once services, endpointslices (and pods if watched) were each listed once. Stays true. */
  get synced(): boolean {
    return this.isSynced;
  }

  /** Resources being watched, in start order. */
  get resources(): WatchedResource[] {
    return [...this.byResource.keys()];
  }

  start(): void {
    if (this.started) return;
    this.started = true;
    this.o.log.info({ server: this.o.kc.getCurrentCluster()?.server, resources: this.resources }, 'starting API sync');
    for (const r of this.reflectors.values()) r.start();
  }

  /** Aborts every list, watch and retry wait; resolves when none is left. */
  async stop(): Promise<void> {
    await Promise.all([...this.reflectors.values()].map((r) => r.stop()));
  }

  /**
   * Resolves when synced (at once if already). With a timeout, rejects after it with what is
   * still missing and why (kube-dns exits when the initial sync does not finish in time).
   */
  waitForSync(timeoutMs?: number): Promise<void> {
    if (this.isSynced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const onSynced = (): void => {
        clearTimeout(timer);
        resolve();
      };
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.off('synced', onSynced);
              reject(new Error(`API sync not complete after ${timeoutMs} ms: ${this.pending()}`));
            }, timeoutMs);
      this.once('synced', onSynced);
    });
  }

  /**
   * What the initial sync still waits for, and why: e.g. "pods not listed (3 errors, last: list:
   * HTTP 403: forbidden)"; empty once synced.
   */
  pending(): string {
    return [...this.reflectors]
      .filter(([, r]) => !r.synced)
      .map(([name, r]) => {
        const st = r.stats();
        return `${name} not listed (${st.errors} errors${st.lastError ? `, last: ${st.lastError}` : ''})`;
      })
      .join('; ');
  }

  stats(): KubeSyncStats {
    const out: KubeSyncStats = {};
    for (const [name, list] of this.byResource) out[name] = combine(list.map((r) => r.stats()));
    return out;
  }

  private checkSynced(): void {
    if (this.isSynced || ![...this.reflectors.values()].every((r) => r.synced)) return;
    this.isSynced = true;
    this.o.log.info({ stats: this.stats() }, 'API sync complete');
    this.emit('synced');
  }
}
