// The fake API server's state: objects per resource, one global resourceVersion (as etcd's
// revision), a bounded event history for watches, and list snapshots for `continue` tokens.
import { randomUUID } from 'node:crypto';
import { RESOURCES, type ResourceName } from './resources.js';

/** An API object as JSON (what the server stores and sends). */
export type KubeObject = {
  kind?: string;
  apiVersion?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; uid?: string; [k: string]: unknown };
  [k: string]: unknown;
};

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredEvent {
  rv: number;
  resource: ResourceName;
  namespace: string;
  type: WatchEventType;
  object: KubeObject;
  /**
   * MODIFIED and DELETED: the object before. A watch with a labelSelector turns a move in or out
   * of it into ADDED / DELETED; a list at an earlier resourceVersion undoes the event with it.
   */
  previous?: KubeObject;
}

interface Snapshot {
  resource: ResourceName;
  namespace: string;
  rv: number;
  items: KubeObject[];
}

export type EventListener = (e: StoredEvent) => void;

const MAX_SNAPSHOTS = 32;

function key(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export class ObjectStore {
  private rv = 1;
  /** Watches from a resourceVersion below this cannot be served any more (410). */
  private oldestRv = 1;
  private readonly objects = new Map<ResourceName, Map<string, KubeObject>>();
  private history: StoredEvent[] = [];
  private readonly snapshots = new Map<string, Snapshot>();
  private snapshotSeq = 0;
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly historySize: number) {
    for (const r of Object.keys(RESOURCES) as ResourceName[]) this.objects.set(r, new Map());
  }

  get resourceVersion(): number {
    return this.rv;
  }

  get oldestResourceVersion(): number {
    return this.oldestRv;
  }

  private bucket(resource: ResourceName): Map<string, KubeObject> {
    return this.objects.get(resource)!;
  }

  /** Creates or replaces an object; returns the stored copy (with resourceVersion, uid, ...). */
  upsert(resource: ResourceName, obj: object): KubeObject {
    const copy = JSON.parse(JSON.stringify(obj)) as KubeObject;
    const meta = (copy.metadata ??= {});
    if (!meta.name) throw new Error(`fake-apiserver: ${resource} object without metadata.name`);
    if (RESOURCES[resource].clusterScoped) delete meta.namespace;
    else meta.namespace ??= 'default';
    const k = key(meta.namespace ?? '', meta.name);
    const prev = this.bucket(resource).get(k);
    this.rv++;
    meta.resourceVersion = String(this.rv);
    meta.uid = prev?.metadata?.uid ?? meta.uid ?? randomUUID();
    meta['creationTimestamp'] = prev?.metadata?.['creationTimestamp'] ?? meta['creationTimestamp'] ?? new Date().toISOString();
    copy.kind = RESOURCES[resource].kind;
    copy.apiVersion = RESOURCES[resource].apiVersion;
    this.bucket(resource).set(k, copy);
    this.record({ rv: this.rv, resource, namespace: meta.namespace ?? '', type: prev ? 'MODIFIED' : 'ADDED', object: copy, ...(prev && { previous: prev }) });
    return copy;
  }

  /** Deletes an object; the DELETED event carries its last state at the deletion's resourceVersion. */
  remove(resource: ResourceName, namespace: string, name: string): boolean {
    const k = key(namespace, name);
    const prev = this.bucket(resource).get(k);
    if (!prev) return false;
    this.bucket(resource).delete(k);
    this.rv++;
    const object = { ...prev, metadata: { ...prev.metadata, resourceVersion: String(this.rv) } };
    this.record({ rv: this.rv, resource, namespace, type: 'DELETED', object, previous: prev });
    return true;
  }

  get(resource: ResourceName, namespace: string, name: string): KubeObject | undefined {
    return this.bucket(resource).get(key(namespace, name));
  }

  /** Current objects in key order (etcd's order: namespace, then name). */
  list(resource: ResourceName, namespace?: string): KubeObject[] {
    const out: [string, KubeObject][] = [];
    for (const [k, o] of this.bucket(resource)) {
      if (namespace === undefined || o.metadata?.namespace === namespace) out.push([k, o]);
    }
    out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return out.map(([, o]) => o);
  }

  /**
   * The objects as they were at resourceVersion `rv` (etcd serving an exact revision), or
   * undefined when history no longer reaches back that far (compacted: the caller answers 410).
   */
  listAt(rv: number, resource: ResourceName, namespace?: string): KubeObject[] | undefined {
    if (rv < this.oldestRv || rv > this.rv) return undefined;
    const state = new Map(this.bucket(resource));
    for (let i = this.history.length - 1; i >= 0 && this.history[i]!.rv > rv; i--) {
      const e = this.history[i]!;
      if (e.resource !== resource) continue;
      const k = key(e.namespace, e.object.metadata?.name ?? '');
      if (e.previous) state.set(k, e.previous);
      else state.delete(k);
    }
    return [...state.entries()]
      .filter(([, o]) => namespace === undefined || o.metadata?.namespace === namespace)
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([, o]) => o);
  }

  /**
   * Back to the state at `rv`, as etcd restored from a backup taken then (without
   * --bump-revision): every later change is gone, and the next write reuses rv + 1.
   */
  rollBack(rv: number): void {
    if (rv < this.oldestRv || rv > this.rv) throw new Error(`fake-apiserver: cannot roll back to ${rv}: history holds ${this.oldestRv}-${this.rv}`);
    for (const [resource, bucket] of this.objects) {
      const then = this.listAt(rv, resource)!;
      bucket.clear();
      for (const o of then) bucket.set(key(o.metadata?.namespace ?? '', o.metadata?.name ?? ''), o);
    }
    this.history = this.history.filter((e) => e.rv <= rv);
    this.rv = rv;
    this.snapshots.clear();
  }

  private record(e: StoredEvent): void {
    this.history.push(e);
    if (this.history.length > this.historySize) {
      const dropped = this.history.splice(0, this.history.length - this.historySize);
      this.oldestRv = dropped.at(-1)!.rv;
    }
    for (const l of this.listeners) l(e);
  }

  /**
   * Events after `rv` for a resource (and namespace), or undefined when some of them were
   * compacted away: the caller answers 410.
   */
  eventsSince(rv: number, resource: ResourceName, namespace?: string): StoredEvent[] | undefined {
    if (rv < this.oldestRv) return undefined;
    return this.history.filter((e) => e.rv > rv && e.resource === resource && (namespace === undefined || e.namespace === namespace));
  }

  /** Forgets the whole history: a watch from any resourceVersion before now gets 410. */
  compact(): void {
    this.history = [];
    this.oldestRv = this.rv;
    this.snapshots.clear();
  }

  subscribe(l: EventListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  /** Keeps a consistent list result for later pages; returns its id. Old snapshots are evicted. */
  saveSnapshot(resource: ResourceName, namespace: string, rv: number, items: KubeObject[]): string {
    const id = String(++this.snapshotSeq);
    this.snapshots.set(id, { resource, namespace, rv, items });
    while (this.snapshots.size > MAX_SNAPSHOTS) this.snapshots.delete(this.snapshots.keys().next().value!);
    return id;
  }

  snapshot(id: string): Snapshot | undefined {
    const s = this.snapshots.get(id);
    return s && s.rv >= this.oldestRv ? s : undefined;
  }

  dropSnapshot(id: string): void {
    this.snapshots.delete(id);
  }

  expireSnapshots(): void {
    this.snapshots.clear();
  }
}
