// Forwarding-loop detection (a node resolv.conf pointing at the cluster DNS), as CoreDNS's loop plugin does it: send each
// upstream a question for a name nobody else would ask; if that question reaches us, the
// upstream hands our queries back to us (a node resolv.conf pointing at the cluster DNS, for
// example), and every forwarded query would circle until it times out. A stub domain's server is
// asked for a name inside its domain, as CoreDNS asks for one inside a server block's zone: a
// server that loops only for that domain (the kube-dns Service IP, or a resolver that forwards the
// domain to the cluster DNS) would answer a name outside it honestly.
import { randomBytes } from 'node:crypto';

export const LOOP_PROBE_SUFFIX = 'loop-check.kube-dns.invalid';

export interface ProbeTarget {
  /** "ip:port" */
  server: string;
  /** The stub domain the server was asked for; undefined: an upstream. */
  domain?: string;
}

export class LoopProbes {
  /** probe name (lower-case) → the server it was sent to */
  private readonly pending = new Map<string, ProbeTarget>();

  get size(): number {
    return this.pending.size;
  }

  /**
   * A fresh probe name for `target`. An upstream is asked under `.invalid` (RFC 6761), which never
   * exists, so an honest upstream answers NXDOMAIN; a stub server under its domain, where an honest
   * one answers NXDOMAIN too. Undefined when the domain is too long for the two random labels.
   */
  create(target: ProbeTarget): string | undefined {
    const name = `${randomBytes(6).toString('hex')}.${randomBytes(6).toString('hex')}.${target.domain ?? LOOP_PROBE_SUFFIX}`;
    if (name.length > 253) return undefined;
    this.pending.set(name, target);
    return name;
  }

  /** The server whose probe this is, when a query for `lname` arrives at our own server. */
  match(lname: string): ProbeTarget | undefined {
    return this.pending.get(lname);
  }

  forget(name: string): void {
    this.pending.delete(name);
  }
}
