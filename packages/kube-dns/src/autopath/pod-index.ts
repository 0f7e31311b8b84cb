// Which namespace an asking pod is in, by its IP, for autopath. Fed by the same Pods watch as
// --pods=verified (a tee in app.ts), kept apart from the zone because it answers a different
// question: not "does this pod name exist" but "whose search path applies to this client".
import type { PodInfo } from '../records/types.js';

export type PodLookup =
  | { ok: true; namespace: string }
  /**
   * unknown_pod:   no running pod has this IP (a node, a pod not seen yet, something outside)
   * host_network:  a hostNetwork pod has it: it is the node's IP, shared by pods of any namespace
   * ambiguous_pod: pods of two namespaces claim it (an IP reused before the old pod was deleted)
   */
  | { ok: false; reason: 'unknown_pod' | 'host_network' | 'ambiguous_pod' };

interface Entry {
  namespace: string;
  ips: readonly string[];
  hostNetwork: boolean;
}

export class PodIpIndex {
  private readonly pods = new Map<string, Entry>();
  /** ip → namespace → number of pods (not hostNetwork, not finished) with it. */
  private readonly byIp = new Map<string, Map<string, number>>();
  /** ip → number of hostNetwork pods with it. */
  private readonly hostIps = new Map<string, number>();

  setPod(p: PodInfo): void {
    this.deletePod(p.namespace, p.name);
    // a finished pod (Succeeded/Failed) keeps status.podIP, but the IP is free for the next pod
    if (p.finished) return;
    const e: Entry = { namespace: p.namespace, ips: p.ips, hostNetwork: p.hostNetwork === true };
    this.pods.set(`${p.namespace}/${p.name}`, e);
    this.index(e, 1);
  }

  deletePod(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const e = this.pods.get(key);
    if (!e) return;
    this.index(e, -1);
    this.pods.delete(key);
  }

  lookup(ip: string): PodLookup {
    if (this.hostIps.has(ip)) return { ok: false, reason: 'host_network' };
    const m = this.byIp.get(ip);
    if (!m) return { ok: false, reason: 'unknown_pod' };
    if (m.size > 1) return { ok: false, reason: 'ambiguous_pod' };
    return { ok: true, namespace: m.keys().next().value! };
  }

  get size(): number {
    return this.pods.size;
  }

  private index(e: Entry, by: 1 | -1): void {
    for (const ip of new Set(e.ips)) {
      if (e.hostNetwork) {
        bump(this.hostIps, ip, by);
        continue;
      }
      let m = this.byIp.get(ip);
      if (!m) this.byIp.set(ip, (m = new Map()));
      bump(m, e.namespace, by);
      if (m.size === 0) this.byIp.delete(ip);
    }
  }
}

function bump(m: Map<string, number>, key: string, by: 1 | -1): void {
  const n = (m.get(key) ?? 0) + by;
  if (n > 0) m.set(key, n);
  else m.delete(key);
}
