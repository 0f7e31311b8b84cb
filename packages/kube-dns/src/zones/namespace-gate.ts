// --namespace-labels: only namespaces whose labels match the selector are served. The set moves
// with the cluster (a namespace relabelled in or out, created, deleted), so this gate sits between
// the informers and the zone: it remembers every object it was given (references to the compact
// objects, no copies) and moves a namespace's objects into or out of the zone when the namespace
// starts or stops matching. Pure: no I/O, no timers.
import type { EndpointSliceInfo, PodInfo, ServiceInfo, ZoneWriter } from '../records/types.js';
import { matchesLabels, type LabelSelector } from './label-selector.js';

interface Held {
  services: Map<string, ServiceInfo>;
  slices: Map<string, EndpointSliceInfo>;
  pods: Map<string, PodInfo>;
}

export class NamespaceGate implements ZoneWriter {
  private readonly matching = new Set<string>();
  private readonly held = new Map<string, Held>();

  /** `onFlip` runs after a namespace started or stopped matching (the zone's caches must forget). */
  constructor(
    private readonly zone: ZoneWriter,
    private readonly selector: LabelSelector,
    private readonly onFlip: () => void = () => undefined,
  ) {}

  /** True while the namespace exists and its labels match. */
  allows(namespace: string): boolean {
    return this.matching.has(namespace);
  }

  get matchingCount(): number {
    return this.matching.size;
  }

  // ---- namespaces ----

  setNamespace(name: string, labels: Readonly<Record<string, string>> | undefined): void {
    const now = matchesLabels(this.selector, labels);
    if (now === this.matching.has(name)) return;
    if (now) {
      this.matching.add(name);
      const h = this.held.get(name);
      if (h) {
        for (const s of h.services.values()) this.zone.setService(s);
        for (const s of h.slices.values()) this.zone.setSlice(s);
        for (const p of h.pods.values()) this.zone.setPod(p);
      }
    } else {
      this.hide(name);
    }
    this.onFlip();
  }

  deleteNamespace(name: string): void {
    if (!this.matching.has(name)) return;
    this.hide(name);
    this.onFlip();
  }

  private hide(name: string): void {
    this.matching.delete(name);
    const h = this.held.get(name);
    if (!h) return;
    for (const s of h.slices.values()) this.zone.deleteSlice(s.namespace, s.name);
    for (const s of h.services.values()) this.zone.deleteService(s.namespace, s.name);
    for (const p of h.pods.values()) this.zone.deletePod(p.namespace, p.name);
  }

  // ---- ZoneWriter ----

  private bucket(ns: string): Held {
    let h = this.held.get(ns);
    if (!h) this.held.set(ns, (h = { services: new Map(), slices: new Map(), pods: new Map() }));
    return h;
  }

  private forget(ns: string): void {
    const h = this.held.get(ns);
    if (h && h.services.size === 0 && h.slices.size === 0 && h.pods.size === 0) this.held.delete(ns);
  }

  setService(s: ServiceInfo): void {
    this.bucket(s.namespace).services.set(s.name, s);
    if (this.matching.has(s.namespace)) this.zone.setService(s);
  }

  deleteService(namespace: string, name: string): void {
    this.held.get(namespace)?.services.delete(name);
    this.forget(namespace);
    this.zone.deleteService(namespace, name);
  }

  setSlice(s: EndpointSliceInfo): void {
    this.bucket(s.namespace).slices.set(s.name, s);
    if (this.matching.has(s.namespace)) this.zone.setSlice(s);
  }

  deleteSlice(namespace: string, name: string): void {
    this.held.get(namespace)?.slices.delete(name);
    this.forget(namespace);
    this.zone.deleteSlice(namespace, name);
  }

  setPod(p: PodInfo): void {
    this.bucket(p.namespace).pods.set(p.name, p);
    if (this.matching.has(p.namespace)) this.zone.setPod(p);
  }

  deletePod(namespace: string, name: string): void {
    this.held.get(namespace)?.pods.delete(name);
    this.forget(namespace);
    this.zone.deletePod(namespace, name);
  }
}
