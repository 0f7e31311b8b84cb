// Structural equality of the compact objects. Informers resend unchanged objects (resyncs,
// relists after a dropped watch, status-only updates we do not look at); recognising them keeps the
// generations, and so the response cache, intact.
import type { EndpointInfo, EndpointSliceInfo, PortInfo, ServiceInfo } from './types.js';

function sameList<T>(a: readonly T[], b: readonly T[], eq: (x: T, y: T) => boolean): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!eq(a[i]!, b[i]!)) return false;
  return true;
}

const sameString = (x: string, y: string): boolean => x === y;

function samePort(a: PortInfo, b: PortInfo): boolean {
  return a.name === b.name && a.port === b.port && a.protocol === b.protocol;
}

function sameEndpoint(a: EndpointInfo, b: EndpointInfo): boolean {
  return a.hostname === b.hostname && a.podName === b.podName && a.ready === b.ready && sameList(a.addresses, b.addresses, sameString);
}

export function sameService(a: ServiceInfo, b: ServiceInfo): boolean {
  return (
    a.namespace === b.namespace &&
    a.name === b.name &&
    a.kind === b.kind &&
    a.externalName === b.externalName &&
    a.publishNotReadyAddresses === b.publishNotReadyAddresses &&
    sameList(a.clusterIPs, b.clusterIPs, sameString) &&
    sameList(a.ports, b.ports, samePort) &&
    a.external?.hostname === b.external?.hostname &&
    sameList(a.external?.ips ?? [], b.external?.ips ?? [], sameString) &&
    (a.external === undefined) === (b.external === undefined)
  );
}

export function sameSlice(a: EndpointSliceInfo, b: EndpointSliceInfo): boolean {
  return (
    a.namespace === b.namespace &&
    a.name === b.name &&
    a.serviceName === b.serviceName &&
    a.addressType === b.addressType &&
    sameList(a.ports, b.ports, samePort) &&
    sameList(a.endpoints, b.endpoints, sameEndpoint)
  );
}

export function samePodIps(a: readonly string[], b: readonly string[]): boolean {
  return sameList(a, b, sameString);
}
