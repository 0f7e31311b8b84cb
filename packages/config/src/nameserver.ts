import { isIP } from 'node:net';

/**
 * node's isIP, less IPv6 zone indexes (`fe80::1%eth0`): the original validated with Go's
 * net.ParseIP, which rejects them, and dnsmasq refuses them in its servers and hosts files (bad
 * interface name), so a ConfigMap with one would replace working servers with none.
 */
export function ipFamily(s: string): 0 | 4 | 6 {
  return s.includes('%') ? 0 : (isIP(s) as 0 | 4 | 6);
}

/** The error for an address with a zone index, which ipFamily refuses. */
export const ZONE_INDEX_ERROR = 'an IPv6 zone index (%...) is not accepted';

/** A DNS server address as written in the ConfigMap or on a command line. */
export interface Nameserver {
  /** An IP literal (no brackets) or, for stub domains, a host name. */
  host: string;
  port: number;
  /** 4 or 6 when host is an IP literal, 0 for a name. */
  family: 0 | 4 | 6;
  /** The text the operator wrote. */
  raw: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/**
 * Go's net.SplitHostPort: "host:port", "[host]:port". Returns undefined where Go returns an
 * error: no port part (callers then treat the whole string as the host), too many colons (a
 * bare IPv6 address), or a misplaced bracket.
 */
export function splitHostPort(s: string): { host: string; port: string } | undefined {
  const i = s.lastIndexOf(':');
  if (i < 0) return undefined;
  let host: string;
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    // "]" must be followed by the last ":" and nothing else: "[::1]", "[::1]:53:54", "[::1]x:53" fail.
    if (end < 0 || end + 1 !== i) return undefined;
    host = s.slice(1, end);
    if (host.includes('[')) return undefined;
  } else {
    host = s.slice(0, i);
    if (host.includes(':')) return undefined; // "too many colons": a bare IPv6 address
    if (host.includes('[') || host.includes(']')) return undefined;
  }
  const port = s.slice(i + 1);
  if (port.includes('[') || port.includes(']')) return undefined;
  return { host, port };
}

/** A port number 1..65535 written in decimal, or an error message. */
export function parsePort(p: string): Parsed<number> {
  if (!/^[0-9]+$/.test(p)) return { ok: false, error: `port ${JSON.stringify(p)} is not a number` };
  const n = Number(p);
  if (n < 1 || n > 65535) return { ok: false, error: `port ${p} is out of range 1-65535` };
  return { ok: true, value: n };
}

/**
 * `IP`, `IP:port`, `[IPv6]:port` or `[IPv6]`: the upstream nameserver forms (the original's
 * ValidateNameserverIpAndPort, plus a bracketed IPv6 without a port).
 */
export function parseIpNameserver(raw: string, defaultPort = 53): Parsed<Nameserver> {
  const s = raw.trim();
  if (s === '') return { ok: false, error: 'empty nameserver' };
  if (s.includes('%')) return { ok: false, error: `${JSON.stringify(raw)}: ${ZONE_INDEX_ERROR}` };
  const bare = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
  const fam = isIP(bare);
  if (fam !== 0) return { ok: true, value: { host: bare, port: defaultPort, family: fam as 4 | 6, raw } };
  const hp = splitHostPort(s);
  if (!hp) return { ok: false, error: `${JSON.stringify(raw)} is not an IP address or IP:port` };
  const hf = isIP(hp.host);
  if (hf === 0) return { ok: false, error: `${JSON.stringify(hp.host)} in ${JSON.stringify(raw)} is not an IP address` };
  const port = parsePort(hp.port);
  if (!port.ok) return { ok: false, error: `${port.error} in ${JSON.stringify(raw)}` };
  return { ok: true, value: { host: hp.host, port: port.value, family: hf as 4 | 6, raw } };
}

/** Host and port for a listener or a probe target; a missing port takes the default. */
export function parseHostPort(raw: string, defaultPort: number): Parsed<{ host: string; port: number }> {
  const s = raw.trim();
  const bare = s.startsWith('[') && s.endsWith(']') ? s.slice(1, -1) : s;
  if (isIP(bare) !== 0 || (!s.includes(':') && s !== '')) return { ok: true, value: { host: bare, port: defaultPort } };
  const hp = splitHostPort(s);
  if (!hp || hp.host === '') return { ok: false, error: `${JSON.stringify(raw)} is not host:port` };
  const port = parsePort(hp.port);
  if (!port.ok) return { ok: false, error: `${port.error} in ${JSON.stringify(raw)}` };
  return { ok: true, value: { host: hp.host, port: port.value } };
}

/** "1.2.3.4:53", "[fd00::1]:53": the form Node and most tools print. */
export function formatHostPort(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The host to give an HTTP server's listen() for a bind-address flag. 0.0.0.0 (the flags'
 * default) means every address, as in the original, whose Go listener takes IPv6 too: the kubelet
 * probes the pod IP, which is IPv6 in an IPv6 cluster. Without a host node listens on [::]
 * dual-stack, or on 0.0.0.0 where the host has no IPv6.
 */
export function httpListenHost(bindAddress: string): string | undefined {
  return bindAddress === '0.0.0.0' ? undefined : bindAddress;
}
