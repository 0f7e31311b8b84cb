// Reading dnsmasq's statistics over DNS: CHAOS-class TXT queries (`hits.bind.` ...), the same
// interface `dig CH TXT hits.bind` uses, so no shared files or signals between containers.
import { query, rcodeOf } from '@kube-dns/dns-client';
import type * as dnsPacket from 'dns-packet';

/** The original's cache statistics, in the order it asks for them. */
export const CACHE_STATS = ['hits', 'misses', 'evictions', 'insertions', 'cachesize'] as const;
export type CacheStat = (typeof CACHE_STATS)[number];
export type CacheStats = Record<CacheStat, number>;

export interface UpstreamStats {
  /** As dnsmasq writes it: `127.0.0.1#10053`, `fd00::1#53`. */
  server: string;
  queries: number;
  failures: number;
}

export interface DnsmasqAddress {
  host: string;
  port: number;
}

async function txtStrings(server: DnsmasqAddress, name: string, timeoutMs: number, retryTcpOnTruncation = false): Promise<string[]> {
  const r = await query(server, { name, type: 'TXT', class: 'CH', transport: 'udp', timeoutMs, retryTcpOnTruncation });
  const answers = r.packet.answers ?? [];
  if (answers.length !== 1 || answers[0]!.type !== 'TXT') {
    throw new Error(`${name}: expected 1 TXT record in the reply, got ${answers.map((a) => a.type).join(', ') || 'none'} (rcode ${rcodeOf(r.packet)})`);
  }
  const data = (answers[0] as dnsPacket.TxtAnswer).data;
  return (Array.isArray(data) ? data : [data]).map((d) => d.toString());
}

/** An int64 as strconv.ParseInt reads it, or an error naming the statistic. */
export function parseStatValue(name: string, strings: string[]): number {
  if (strings.length !== 1) throw new Error(`${name}: expected 1 TXT string, got ${strings.length}`);
  const s = strings[0]!;
  if (!/^[+-]?[0-9]{1,19}$/.test(s)) throw new Error(`${name}: ${JSON.stringify(s)} is not an integer`);
  return Number(s);
}

/** The five cache statistics; the first failure aborts the poll, as in the original. */
export async function readCacheStats(server: DnsmasqAddress, timeoutMs: number): Promise<CacheStats> {
  const out: Partial<CacheStats> = {};
  for (const stat of CACHE_STATS) {
    const name = `${stat}.bind.`;
    out[stat] = parseStatValue(name, await txtStrings(server, name, timeoutMs));
  }
  return out as CacheStats;
}

/**
 * `servers.bind`: one string per upstream, `<address>#<port> <queries sent> <queries failed>`.
 * dnsmasq lists an address once per `--server` line using it (e.g. several stub domains on one
 * server), so the counts of one address are summed. Malformed strings are skipped.
 */
export function parseServersBind(strings: readonly string[]): UpstreamStats[] {
  const byServer = new Map<string, UpstreamStats>();
  for (const s of strings) {
    const m = /^(\S+) ([0-9]+) ([0-9]+)$/.exec(s.trim());
    if (!m) continue;
    const server = m[1]!;
    const prev = byServer.get(server) ?? { server, queries: 0, failures: 0 };
    byServer.set(server, { server, queries: prev.queries + Number(m[2]), failures: prev.failures + Number(m[3]) });
  }
  return [...byServer.values()];
}

/**
 * Over TCP when the UDP reply is truncated: past some 20 upstreams (fewer with IPv6 addresses and
 * large counts) the list no longer fits 512 bytes, and dnsmasq then sends TC and no answer at all.
 */
export async function readUpstreamStats(server: DnsmasqAddress, timeoutMs: number): Promise<UpstreamStats[]> {
  return parseServersBind(await txtStrings(server, 'servers.bind.', timeoutMs, true));
}
