// Which servers get names outside the cluster zone. Pure.
import type { KubeDnsConfig, Nameserver } from '@kube-dns/config';

export interface UpstreamChoice {
  servers: Nameserver[];
  source: 'configmap' | 'flag' | 'resolv.conf';
  /** Servers dropped because they would send queries back to us. */
  refused: { server: Nameserver; reason: string }[];
}

/**
 * ConfigMap upstreamNameservers, else --nameservers (the caller passes none with --config-dir,
 * as the original), else resolv.conf.
 * A server that is our own listener is refused: forwarding to ourselves loops until the query
 * times out (a node resolv.conf pointing at the cluster DNS).
 */
export function chooseUpstreams(
  config: KubeDnsConfig,
  flagServers: Nameserver[],
  resolvConf: Nameserver[],
  self: { addresses: string[]; port: number },
): UpstreamChoice {
  let servers: Nameserver[];
  let source: UpstreamChoice['source'];
  if (config.upstreamNameservers.length) [servers, source] = [config.upstreamNameservers, 'configmap'];
  else if (flagServers.length) [servers, source] = [flagServers, 'flag'];
  else [servers, source] = [resolvConf, 'resolv.conf'];
  const refused: UpstreamChoice['refused'] = [];
  const ok = servers.filter((s) => {
    if (isSelf(s, self)) {
      refused.push({ server: s, reason: `it is this server's own address (${s.host}:${s.port}): forwarding there would loop` });
      return false;
    }
    return true;
  });
  return { servers: ok, source, refused };
}

function isSelf(s: Nameserver, self: { addresses: string[]; port: number }): boolean {
  if (s.port !== self.port) return false;
  const wildcard = self.addresses.some((a) => a === '0.0.0.0' || a === '::');
  const loopback = /^127\./.test(s.host) || s.host === '::1';
  return self.addresses.includes(s.host) || (wildcard && loopback);
}

export interface StubInZone {
  domain: string;
  /** The zone of ours (the cluster zone, an external zone) it is in. */
  zone: string;
  /** Inside the zone: its names go to the stub servers. The zone itself: not used. */
  forwarded: boolean;
}

/**
 * Stub domains that are one of our zones or inside one. Inside, the stub domain wins, as the
 * longest match does in dnsmasq in front of the original and in CoreDNS's server blocks. The zone
 * itself stays ours: forwarding it away would take every Service name with it.
 */
export function stubDomainsInZones(domains: Iterable<string>, zones: readonly string[]): StubInZone[] {
  const out: StubInZone[] = [];
  for (const domain of domains) {
    const zone = zones.find((z) => domain === z || domain.endsWith(`.${z}`));
    if (zone !== undefined) out.push({ domain, zone, forwarded: domain !== zone });
  }
  return out;
}

/** The stub domain whose servers take `lname` (longest matching suffix), if any. */
export function stubDomainOf(lname: string, stubDomains: ReadonlyMap<string, unknown>): string | undefined {
  let best: string | undefined;
  for (const domain of stubDomains.keys()) {
    if ((lname === domain || lname.endsWith(`.${domain}`)) && (!best || domain.length > best.length)) best = domain;
  }
  return best;
}
