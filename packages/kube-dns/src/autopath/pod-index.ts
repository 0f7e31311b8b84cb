// Which namespace an asking pod is in, by its IP, for autopath. Fed by the same Pods watch as
// --pods=verified (a tee in app.ts), kept apart from the zone because it answers a different
// question: not "does this pod name exist" but "whose search path applies to this client".
//
// Memory (one entry per pod, 100,000 in a large cluster; docs/footprint.md): nothing is built per
// pod but map entries.
//  - Pods by namespace, then name: the name is the PodInfo's string, which the reflector keeps
//    anyway, and the value is the PodInfo's own IP list (the zone keeps the same list with
//    --pods=verified), where a joined '<ns>/<name>' key and an object per pod were their own.
//  - IP → the answer itself: one frozen `{ ok: true, namespace }` per namespace, shared by all of
//    its pods' IPs. Only an IP that several pods hold (a node's IP under hostNetwork pods, an IP
//    reused before the old pod was deleted) gets an object with counts (Crowd), where every IP had
//    a Map of its own. A lookup is one Map read and returns a kept object: it allocates nothing.
import { samePodIps } from '../records/equal.js';
import type { PodInfo } from '../records/types.js';

export type PodLookup =
  | { readonly ok: true; readonly namespace: string }
  /**
   * unknown_pod:   no running pod has this IP (a node, a pod not seen yet, something outside)
   * host_network:  a hostNetwork pod has it: it is the node's IP, shared by pods of any namespace
   * ambiguous_pod: pods of two namespaces claim it (an IP reused before the old pod was deleted)
   */
  | { readonly ok: false; readonly reason: 'unknown_pod' | 'host_network' | 'ambiguous_pod' };

type Found = Extract<PodLookup, { ok: true }>;

const UNKNOWN: PodLookup = Object.freeze({ ok: false, reason: 'unknown_pod' });
const HOST_NETWORK: PodLookup = Object.freeze({ ok: false, reason: 'host_network' });
const AMBIGUOUS: PodLookup = Object.freeze({ ok: false, reason: 'ambiguous_pod' });

/** A hostNetwork pod's IPs (the node's): marked apart, as they count for no namespace. */
class HostIps {
  constructor(readonly ips: readonly string[]) {}
}

interface Namespace {
  readonly found: Found;
  /** name → the IPs the pod is indexed with (not finished pods: they are not kept). */
  readonly pods: Map<string, readonly string[] | HostIps>;
}

/** An IP held by more than one pod, or by a hostNetwork pod. */
class Crowd {
  /** hostNetwork pods with this IP. */
  host = 0;
  /** Other pods with this IP, by their namespace's answer. */
  readonly counts = new Map<Found, number>();
  /** What lookup answers, kept up to date by settle(). */
  answer: PodLookup = UNKNOWN;
}

export class PodIpIndex {
  private readonly namespaces = new Map<string, Namespace>();
  /**
   * ip → the answer when exactly one pod holds it and it is not hostNetwork (nearly every IP),
   * a Crowd otherwise. An IP no pod holds is absent.
   */
  private readonly byIp = new Map<string, Found | Crowd>();
  private count = 0;

  setPod(p: PodInfo): void {
    const ns = this.namespaces.get(p.namespace);
    const old = ns?.pods.get(p.name);
    const host = p.hostNetwork === true;
    // a finished pod (Succeeded/Failed) keeps status.podIP, but the IP is free for the next pod
    if (p.finished) return this.deletePod(p.namespace, p.name);
    // a status update that keeps the IPs (most of a Pods watch) changes nothing here
    if (old !== undefined && old instanceof HostIps === host && samePodIps(ipsOf(old), p.ips)) return;
    if (old !== undefined) this.index(ns!.found, old, -1);
    const entry = this.namespaceOf(p.namespace);
    const kept = host ? new HostIps(p.ips) : p.ips;
    if (old === undefined) this.count++;
    entry.pods.set(p.name, kept);
    this.index(entry.found, kept, 1);
  }

  deletePod(namespace: string, name: string): void {
    const ns = this.namespaces.get(namespace);
    const old = ns?.pods.get(name);
    if (old === undefined) return;
    this.index(ns!.found, old, -1);
    ns!.pods.delete(name);
    this.count--;
    if (ns!.pods.size === 0) this.namespaces.delete(namespace);
  }

  /** O(1), and allocates nothing: the answers are kept objects (do not mutate them). */
  lookup(ip: string): PodLookup {
    const v = this.byIp.get(ip);
    if (v === undefined) return UNKNOWN;
    return v instanceof Crowd ? v.answer : v;
  }

  get size(): number {
    return this.count;
  }

  /** IPs some indexed pod holds (every other IP has no entry: churn leaves nothing behind). */
  get ipCount(): number {
    return this.byIp.size;
  }

  private namespaceOf(namespace: string): Namespace {
    let ns = this.namespaces.get(namespace);
    if (!ns) this.namespaces.set(namespace, (ns = { found: Object.freeze({ ok: true, namespace }), pods: new Map() }));
    return ns;
  }

  private index(found: Found, kept: readonly string[] | HostIps, by: 1 | -1): void {
    const host = kept instanceof HostIps;
    const ips = ipsOf(kept);
    for (let i = 0; i < ips.length; i++) {
      const ip = ips[i]!;
      if (ips.indexOf(ip) < i) continue; // listed twice: counted once
      const v = this.byIp.get(ip);
      if (by > 0 && v === undefined && !host) {
        this.byIp.set(ip, found);
        continue;
      }
      if (by < 0 && v === found) {
        this.byIp.delete(ip);
        continue;
      }
      let crowd: Crowd;
      if (v instanceof Crowd) crowd = v;
      else {
        // undefined or a single pod's answer: becomes a crowd
        this.byIp.set(ip, (crowd = new Crowd()));
        if (v !== undefined) crowd.counts.set(v, 1);
      }
      if (host) crowd.host += by;
      else {
        const n = (crowd.counts.get(found) ?? 0) + by;
        if (n > 0) crowd.counts.set(found, n);
        else crowd.counts.delete(found);
      }
      this.settle(ip, crowd);
    }
  }

  /** A crowd after a change: back to a single answer (or nothing) when one pod or none is left. */
  private settle(ip: string, c: Crowd): void {
    if (c.host === 0 && c.counts.size <= 1) {
      const only = c.counts.size === 1 ? c.counts.entries().next().value! : undefined;
      if (only === undefined) return void this.byIp.delete(ip);
      if (only[1] === 1) return void this.byIp.set(ip, only[0]);
    }
    c.answer = c.host > 0 ? HOST_NETWORK : c.counts.size > 1 ? AMBIGUOUS : c.counts.keys().next().value!;
  }
}

function ipsOf(kept: readonly string[] | HostIps): readonly string[] {
  return kept instanceof HostIps ? kept.ips : kept;
}
