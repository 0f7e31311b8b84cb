// Test helpers for the kube/ tests: a ZoneWriter that records what it was told, and polling.
import type { EndpointSliceInfo, PodInfo, ServiceInfo, ZoneWriter } from '../src/records/types.js';

export class RecordingZone implements ZoneWriter {
  readonly services = new Map<string, ServiceInfo>();
  readonly slices = new Map<string, EndpointSliceInfo>();
  readonly pods = new Map<string, PodInfo>();
  /** Every call, e.g. 'setService ns/a 10.0.0.1', 'deleteSlice ns/s'. */
  readonly log: string[] = [];

  setService(s: ServiceInfo): void {
    this.services.set(`${s.namespace}/${s.name}`, s);
    this.log.push(`setService ${s.namespace}/${s.name} ${s.kind === 'ExternalName' ? s.externalName : s.clusterIPs.join(',')}`);
  }
  deleteService(namespace: string, name: string): void {
    this.services.delete(`${namespace}/${name}`);
    this.log.push(`deleteService ${namespace}/${name}`);
  }
  setSlice(s: EndpointSliceInfo): void {
    this.slices.set(`${s.namespace}/${s.name}`, s);
    this.log.push(`setSlice ${s.namespace}/${s.name} ${s.endpoints.flatMap((e) => e.addresses).join(',')}`);
  }
  deleteSlice(namespace: string, name: string): void {
    this.slices.delete(`${namespace}/${name}`);
    this.log.push(`deleteSlice ${namespace}/${name}`);
  }
  setPod(p: PodInfo): void {
    this.pods.set(`${p.namespace}/${p.name}`, p);
    this.log.push(`setPod ${p.namespace}/${p.name} ${p.ips.join(',')}`);
  }
  deletePod(namespace: string, name: string): void {
    this.pods.delete(`${namespace}/${name}`);
    this.log.push(`deletePod ${namespace}/${name}`);
  }
  count(entry: string): number {
    return this.log.filter((l) => l === entry).length;
  }
}

/** Polls `cond` every 5 ms; rejects with `what` after `timeoutMs`. */
export async function waitUntil(cond: () => boolean, what: string, timeoutMs = 1000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
