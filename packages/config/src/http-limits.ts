// What the binaries' HTTP servers allow a client: any pod of the cluster can open connections to a
// DNS pod's HTTP ports. Node closes none that sends nothing and caps none: 17,000 silent
// connections took the sidecar past its 48 MB heap, and with it went the liveness of kubedns and
// dnsmasq, which the kubelet asks through the sidecar. Each connection costs 3-8 KB.
import type { Server } from 'node:http';

/** Connections at once; past it Node closes a new one at once. Prometheus and the kubelet need a handful. */
export const HTTP_MAX_CONNECTIONS = 512;
/** A connection with nothing sent or received this long is closed: as long as /cache waits for a reader. */
export const HTTP_IDLE_MS = 30_000;

export function limitHttpConnections(server: Server, o: { maxConnections?: number; idleMs?: number } = {}): void {
  server.maxConnections = o.maxConnections ?? HTTP_MAX_CONNECTIONS;
  // no 'timeout' listener: Node destroys the socket
  server.setTimeout(o.idleMs ?? HTTP_IDLE_MS);
}
