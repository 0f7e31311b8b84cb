// Forwarding-loop detection (a node resolv.conf pointing at the cluster DNS), as CoreDNS's loop plugin does it: send each
// upstream a question for a name nobody else would ask; if that question reaches us, the
// upstream hands our queries back to us (a node resolv.conf pointing at the cluster DNS, for
// example), and every forwarded query would circle until it times out.
import { randomBytes } from 'node:crypto';

export const LOOP_PROBE_SUFFIX = 'loop-check.kube-dns.invalid';

export class LoopProbes {
  /** probe name (lower-case) → the upstream it was sent to ("ip:port") */
  private readonly pending = new Map<string, string>();

  get size(): number {
    return this.pending.size;
  }

  /** A fresh probe name for `server`. `.invalid` (RFC 6761) never exists, so an honest upstream answers NXDOMAIN. */
  create(server: string): string {
    const name = `${randomBytes(6).toString('hex')}.${randomBytes(6).toString('hex')}.${LOOP_PROBE_SUFFIX}`;
    this.pending.set(name, server);
    return name;
  }

  /** The upstream whose probe this is, when a query for `lname` arrives at our own server. */
  match(lname: string): string | undefined {
    return this.pending.get(lname);
  }

  forget(name: string): void {
    this.pending.delete(name);
  }
}
