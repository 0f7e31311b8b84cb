// Server-side search-path completion (--autopath), as CoreDNS's autopath with `pods verified`.
// A pod of namespace N with ndots:5 asks `X.N.svc.<zone>` first; when that does not exist, we walk
// the rest of its search path here and answer for the first name that exists, as CoreDNS's
// autopath does: a CNAME from the asked name to that name plus its records; or, when it has no
// records of the asked type, NODATA without a CNAME (a CNAME alone would end glibc's search,
// where NODATA lets it go on to the next name, as it would have without us); else with the
// upstream answer for `X`. One round trip instead of up to four per address family.
//
// Who asked: behind dnsmasq the client address is gone, so dnsmasq adds it as an EDNS0
// client-subnet option (--add-subnet=32,128). That option is trusted from loopback only (our own
// dnsmasq); anything else (no option, another source, a malformed option, a pod we cannot tie to
// exactly one namespace) gets the plain answer. Never another namespace's search path.
//
// Only a lookup's first question is completed. When a walk's reply leaves the search to the pod
// (plain NXDOMAIN, NODATA), its later names are the pod's own search, not new lookups, though
// `redis.N.svc.<zone>` (after `redis.N.N.svc.<zone>`, for `redis.N`; or asked as is, last, for
// `redis.N.svc.<zone>` with its 4 dots under ndots:5) looks like the first expansion of `redis`:
// completing it would answer for a name the pod never asked. So such walks are remembered per
// client and base (search-memory.ts) and those later names get the plain answer. An absolute
// `redis.N.svc.<zone>.` is the same question on the wire: it is completed (as by CoreDNS).
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import * as dnsPacket from 'dns-packet';
import type { Logger } from '@kube-dns/config';
import type { Transport } from '@kube-dns/dns-client';
import { buildQuery } from '@kube-dns/dns-client';
import type { Resolution } from '../resolve/types.js';
import type { ParsedQuery } from '../server/wire.js';
import { isLoopback, readClientSubnet } from './ecs.js';
import type { AutopathResult } from './metrics.js';
import type { PodIpIndex } from './pod-index.js';
import { basesReaching, firstExpansion, laterNameLooksFirst, remainingCandidates } from './search.js';
import { SearchMemory } from './search-memory.js';

export interface AutopathAnswer {
  rcode: number;
  aa: boolean;
  answers: dnsPacket.Answer[];
  authorities: dnsPacket.Answer[];
  /** An upstream's records did not fit over UDP (TC): the reply says TC, the client asks again over TCP. */
  truncated: boolean;
}

/**
 * What a walk came to: the answer to send (none: the plain NXDOMAIN), and whether it asked an
 * upstream on the way (the query's time is then the upstream's: timed as recursive, not auth).
 */
export interface Walked {
  answer: AutopathAnswer | undefined;
  forwarded: boolean;
}

/**
 * A whole walk's time at most. Each upstream question has the forwarder's 5 s, but a walk asks
 * the node's search domains and then the name itself one after another: 3 domains and a 1.5 s
 * upstream made 6 s, past musl's 5 s for a lookup in all (it then gives up the lookup rather than
 * going on with its search) and glibc's 5 s a try. Past it the walk ends with the plain NXDOMAIN,
 * and the pod's resolver asks its own search names, each with its own timeout.
 */
export const WALK_DEADLINE_MS = 2000;

const TIMED_OUT = Symbol('timed out');

interface UpstreamAnswer {
  rcode: number;
  answers: dnsPacket.Answer[];
  authorities: dnsPacket.Answer[];
  truncated: boolean;
}

export interface AutopathOptions {
  /** Cluster zone, lower-case, no trailing dot. */
  zone: string;
  /** TTL of the CNAME we make up (the cluster records' --ttl). */
  ttl: number;
  /** The node's search domains (kube-dns's resolv.conf). */
  nodeSearch: readonly string[];
  pods: PodIpIndex;
  resolve: (name: string, qtype: string, lname: string) => Resolution;
  /** Stub domains inside the zone (forward/upstreams.ts): their names are forwarded, not resolved, as the handler does. */
  stubInZone?: { readonly any: boolean; covers(lname: string): boolean };
  /**
   * The names of the ConfigMap's `hosts` key (lower-case, no trailing dot): dnsmasq in front
   * answers them itself when the pod's search reaches them, so the walk must not ask upstream.
   */
  dnsmasqHosts?: { has(lname: string): boolean };
  /** Sends a query upstream (the forwarder); undefined when no server answered. */
  forward: (query: Buffer, lname: string, transport: Transport) => Promise<Buffer | undefined>;
  count: (result: AutopathResult) => void;
  log: Logger;
}

const NXDOMAIN = 3;

export class Autopath {
  /** Walks whose reply left the search to the pod, by client IP and base. */
  private readonly leftToPod = new SearchMemory();

  constructor(private readonly o: AutopathOptions) {}

  /**
   * For a question the zone answered NXDOMAIN. Undefined (synchronously) when autopath does not
   * apply; otherwise a promise of the completed answer, or of undefined for the plain one.
   */
  complete(query: Buffer, q: ParsedQuery, qtype: string, peer: string | undefined, transport: Transport): Promise<Walked> | undefined {
    // a label holding a dot (written \046 in the name string, server/wire.ts) could not be asked
    // upstream as the pod asked it: the plain answer, and the pod walks its search list itself
    const first = q.lname.includes('\\') ? undefined : firstExpansion(q.lname, this.o.zone);
    if (!first) return undefined;
    const ecs = readClientSubnet(query, q.questionEnd);
    if (ecs.kind === 'none') return this.plain('no_client_subnet');
    if (!isLoopback(peer)) return this.plain('untrusted_subnet');
    if (ecs.kind === 'malformed') {
      this.o.log.debug({ reason: ecs.reason, qname: q.name }, 'ignoring a malformed client-subnet option');
      return this.plain('malformed_subnet');
    }
    if (ecs.prefix !== (ecs.family === 4 ? 32 : 128)) return this.plain('partial_subnet');
    const pod = this.o.pods.lookup(ecs.address);
    if (!pod.ok) return this.plain(pod.reason);
    if (pod.namespace !== first.namespace) return this.plain('other_namespace');
    const { zone, nodeSearch } = this.o;
    const client = ecs.address;
    if (this.leftToPod.size > 0) {
      const now = performance.now();
      if (basesReaching(q.lname, zone, nodeSearch).some((b) => this.leftToPod.has(client, b, now))) return this.plain('later_search_name');
    }
    const remember = () => {
      if (laterNameLooksFirst(first.base, first.namespace, zone, nodeSearch)) this.leftToPod.remember(client, first.base, performance.now());
    };
    const walked: Walked = { answer: undefined, forwarded: false };
    return this.walk(q, qtype, first.base, transport, walked, performance.now() + WALK_DEADLINE_MS).then(
      (a) => {
        if (!a || a.answers.length === 0) remember(); // no CNAME: the pod goes on by itself
        walked.answer = a;
        return walked;
      },
      (e: unknown) => {
        remember(); // the handler answers the plain NXDOMAIN
        throw e;
      },
    );
  }

  private plain(result: AutopathResult): undefined {
    this.o.count(result);
    return undefined;
  }

  private async walk(q: ParsedQuery, qtype: string, base: string, transport: Transport, walked: Walked, deadline: number): Promise<AutopathAnswer | undefined> {
    const { zone } = this.o;
    const candidates = remainingCandidates(base, zone, this.o.nodeSearch);
    for (let i = 0; i < candidates.length; i++) {
      const name = candidates[i]!;
      const last = i === candidates.length - 1;
      // dnsmasq's answer, not the upstream's (its override): left to the pod, whose search gets there
      if (this.o.dnsmasqHosts?.has(name)) return this.fail('hosts_name');
      // a name of a stub domain inside the zone is its servers' (dnsmasq in front sends it there)
      const stub = this.o.stubInZone;
      const r = stub !== undefined && stub.any && stub.covers(name) ? undefined : this.o.resolve(name, qtype, name);
      if (r?.action === 'answer') {
        if (r.rcode === 'NXDOMAIN') continue;
        if (r.rcode !== 'NOERROR') return this.fail('not_found');
        let answers = r.answers;
        let truncated = false;
        if (r.chase) {
          walked.forwarded = true;
          const got = await this.upstream(r.chase, qtype, transport, deadline);
          const up = got === TIMED_OUT ? undefined : got; // the CNAME alone: the pod's resolver follows it
          // an ExternalName whose target does not exist is NXDOMAIN asked directly: the pod goes on
          if (up?.rcode === NXDOMAIN) continue;
          if (up) {
            answers = [...answers, ...up.answers];
            truncated = up.truncated;
          }
        }
        return this.found(q, name, 'cluster', answers, r.authorities, truncated);
      }
      walked.forwarded = true;
      const up = await this.upstream(name, qtype, transport, deadline);
      if (up === TIMED_OUT) return this.fail('timeout');
      if (!up) return this.fail('upstream_error');
      if (up.rcode === NXDOMAIN) {
        if (last) return this.fail('not_found');
        continue;
      }
      if (up.rcode !== 0) return this.fail('upstream_error');
      return this.found(q, name, 'upstream', up.answers, up.authorities, up.truncated);
    }
    return this.fail('not_found');
  }

  /**
   * The answer for `name`, the first of the walk that exists: the CNAME to it and its records, or
   * NODATA (its SOA, no CNAME) when it has none of the asked type and nothing was cut (TC).
   * NODATA is counted apart: it completes nothing, the pod's resolver goes on with its next name.
   */
  private found(q: ParsedQuery, name: string, from: 'cluster' | 'upstream', answers: dnsPacket.Answer[], authorities: dnsPacket.Answer[], truncated: boolean): AutopathAnswer {
    const aa = from === 'cluster';
    if (answers.length === 0 && !truncated) {
      this.o.count('nodata');
      return { rcode: 0, aa, answers: [], authorities, truncated };
    }
    this.o.count(from);
    return { rcode: 0, aa, answers: [this.cname(q, name), ...answers], authorities: answers.length ? [] : authorities, truncated };
  }

  private fail(result: AutopathResult): undefined {
    this.o.count(result);
    return undefined;
  }

  /**
   * The made-up link from the asked name to the one that exists. It holds only for pods of the
   * asked name's namespace, so its TTL is the cluster records' (0 in the manifest): a cache keyed
   * by name alone must not hand it on.
   */
  private cname(q: ParsedQuery, target: string): dnsPacket.Answer {
    return { name: q.name, type: 'CNAME', class: 'IN', ttl: this.o.ttl, data: target };
  }

  /** The upstream's answer for `name`, undefined when none came, TIMED_OUT past the walk's deadline. */
  private async upstream(name: string, qtype: string, transport: Transport, deadline: number): Promise<UpstreamAnswer | undefined | typeof TIMED_OUT> {
    const left = deadline - performance.now();
    if (left < 1) return TIMED_OUT;
    let timer: NodeJS.Timeout | undefined;
    try {
      const sub = buildQuery({ name, type: qtype as dnsPacket.RecordType, ednsUdpSize: 1232 });
      // the forward goes on after the deadline (to its own); its answer is no longer waited for
      const expired = new Promise<typeof TIMED_OUT>((resolve) => (timer = setTimeout(resolve, left, TIMED_OUT)));
      const reply = await Promise.race([this.o.forward(sub, name.toLowerCase(), transport), expired]);
      if (reply === TIMED_OUT) return TIMED_OUT;
      if (!reply || reply.length < 4) return undefined;
      const d = dnsPacket.decode(reply);
      return {
        rcode: reply.readUInt16BE(2) & 0xf,
        answers: (d.answers ?? []).filter((a) => a.type !== 'OPT'),
        authorities: (d.authorities ?? []).filter((a) => a.type === 'SOA'),
        truncated: (reply[2]! & 0x02) !== 0,
      };
    } catch (e) {
      this.o.log.debug({ qname: name, err: (e as Error).message }, 'autopath: an upstream candidate failed');
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }
}
