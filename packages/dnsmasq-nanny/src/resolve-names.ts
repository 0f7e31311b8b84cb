// Stub domain servers given as host names: dnsmasq takes only addresses, so names are resolved
// here. Names in the cluster domain go to kube-dns (the pod's own resolver is the node's, which
// does not know them); others go to the system resolver. A name that does not resolve is left
// out (never written as an unusable line) and reported; the caller retries later. A name that
// resolved before keeps its last address while it fails (kube-dns restarting, a slow node
// resolver): dropped, its stub domain's names would go to the upstream servers meanwhile. A name
// with several addresses (a headless Service, whose answers kube-dns rotates) keeps the one it
// had while that is still among them, else takes the lowest: following the rotation rewrote
// the servers file at every refresh, and each rewrite empties dnsmasq's cache.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Logger, Nameserver } from '@kube-dns/config';
import { query, rcodeOf } from '@kube-dns/dns-client';
import { type ServerAddress, toServerAddress } from './servers-file.js';

export interface ResolveOptions {
  kubednsServer: { host: string; port: number };
  /** Lower case, no trailing dot. */
  clusterDomain: string;
  log: Logger;
  timeoutMs?: number;
  /** The system resolver (getaddrinfo: /etc/hosts, then DNS): every address; injectable for tests. */
  systemLookup?: (name: string) => Promise<string | string[]>;
  /** The previous result's `addresses`: where a name that fails now last resolved to. */
  lastKnown?: ReadonlyMap<string, string>;
}

export interface ResolvedStubDomains {
  stubDomains: Map<string, ServerAddress[]>;
  /** `domain: name (reason)` for every name that did not resolve (left out, or kept at its last address). */
  failures: string[];
  /** Name → the address used for it, to pass as the next call's `lastKnown`. */
  addresses: Map<string, string>;
}

export function isClusterName(name: string, clusterDomain: string): boolean {
  const n = name.toLowerCase().replace(/\.$/, '');
  return n === clusterDomain || n.endsWith(`.${clusterDomain}`);
}

async function defaultSystemLookup(name: string): Promise<string[]> {
  return (await lookup(name, { all: true })).map((a) => a.address);
}

/** A and then AAAA through kube-dns; every address of the first type that has any. */
export async function lookupThroughKubeDns(name: string, server: { host: string; port: number }, timeoutMs: number): Promise<string[]> {
  const problems: string[] = [];
  for (const type of ['A', 'AAAA'] as const) {
    const r = await query(server, { name, type, timeoutMs });
    const found = (r.packet.answers ?? []).filter((a) => a.type === type).map((a) => String((a as { data: unknown }).data));
    if (found.length > 0) return found;
    problems.push(`${type}: ${rcodeOf(r.packet)}${rcodeOf(r.packet) === 'NOERROR' ? ' without an address' : ''}`);
  }
  throw new Error(`${server.host}:${server.port} answered ${problems.join(', ')}`);
}

/** The address kept for a name: the last one while still among `found`, else the lowest. */
function steadyAddress(found: string[], last: string | undefined): string {
  if (found.length === 0) throw new Error('no address');
  if (last !== undefined && found.includes(last)) return last;
  return [...found].sort()[0]!;
}

export async function resolveStubDomains(stubDomains: ReadonlyMap<string, readonly Nameserver[]>, opts: ResolveOptions): Promise<ResolvedStubDomains> {
  const timeoutMs = opts.timeoutMs ?? 2000;
  const systemLookup = opts.systemLookup ?? defaultSystemLookup;
  const cache = new Map<string, Promise<string>>();
  const resolveName = (name: string) => {
    let p = cache.get(name);
    if (!p) {
      const all = isClusterName(name, opts.clusterDomain) ? lookupThroughKubeDns(name, opts.kubednsServer, timeoutMs) : systemLookup(name);
      p = all.then((found) => steadyAddress(typeof found === 'string' ? [found] : found, opts.lastKnown?.get(name)));
      cache.set(name, p);
    }
    return p;
  };

  const failures: string[] = [];
  const addresses = new Map<string, string>();
  const out = new Map<string, ServerAddress[]>();
  await Promise.all(
    [...stubDomains].map(async ([domain, servers]) => {
      const resolved = await Promise.all(
        servers.map(async (ns): Promise<ServerAddress | undefined> => {
          if (ns.family !== 0) return toServerAddress(ns);
          try {
            const ip = await resolveName(ns.host);
            if (isIP(ip) === 0) throw new Error(`resolved to ${JSON.stringify(ip)}, not an address`);
            opts.log.debug({ domain, server: ns.raw, ip }, 'resolved stub domain server name');
            addresses.set(ns.host, ip);
            return toServerAddress(ns, ip);
          } catch (e) {
            const reason = (e as Error).message;
            failures.push(`${domain}: ${ns.raw} (${reason})`);
            const kept = opts.lastKnown?.get(ns.host);
            opts.log.warn(
              { domain, server: ns.raw, via: isClusterName(ns.host, opts.clusterDomain) ? 'kube-dns' : 'system resolver', err: reason },
              kept === undefined
                ? `Error looking up IP for name ${ns.host}: stub domain ${domain} is configured without this server until it resolves`
                : `Error looking up IP for name ${ns.host}: stub domain ${domain} keeps its last address ${kept} until it resolves again`,
            );
            if (kept === undefined) return undefined;
            addresses.set(ns.host, kept);
            return toServerAddress(ns, kept);
          }
        }),
      );
      const usable = resolved.filter((s): s is ServerAddress => s !== undefined);
      if (usable.length === 0) {
        opts.log.error({ domain }, `stub domain ${domain} has no usable server: its names go to the upstream servers until one resolves`);
      } else {
        out.set(domain, usable);
      }
    }),
  );
  failures.sort();
  return { stubDomains: out, failures, addresses };
}
