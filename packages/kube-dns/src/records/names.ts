// Name helpers shared by the record builders and the resolver. Pure.
import { isIP } from 'node:net';

/**
 * Canonical text of an IP, as Go's net.IP.String() prints it: IPv4 as is, an IPv4-mapped IPv6
 * address (::ffff:10.1.0.5, which the API accepts in an IPv4 EndpointSlice) as its IPv4 form, so
 * it answers A and in-addr.arpa like the original; any other IPv6 compressed lower-case.
 */
export function normalizeIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  const g = expandIpv6(ip);
  if (g[5] === 'ffff' && g[0] === '0000' && g[1] === '0000' && g[2] === '0000' && g[3] === '0000' && g[4] === '0000') {
    const hi = parseInt(g[6] as string, 16);
    const lo = parseInt(g[7] as string, 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return compressIpv6(g);
}

/** The 8 groups of an IPv6 address as 4-digit lower-case hex. */
export function expandIpv6(ip: string): string[] {
  let s = ip.toLowerCase();
  // an embedded IPv4 tail (::ffff:1.2.3.4)
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    s = s.slice(0, v4.index) + ((a << 8) | b).toString(16) + ':' + ((c << 8) | d).toString(16);
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail !== undefined && tail !== '' ? tail.split(':') : [];
  const fill = tail !== undefined ? Array(8 - h.length - t.length).fill('0') : [];
  return [...h, ...fill, ...t].map((g) => g.padStart(4, '0'));
}

/** RFC 5952 text form: longest run (≥2) of zero groups becomes '::'. */
export function compressIpv6(groups: string[]): string {
  const g = groups.map((x) => x.replace(/^0+(?=.)/, ''));
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (g[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === '0') j++;
    if (j - i > bestLen && j - i >= 2) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return g.join(':');
  return `${g.slice(0, best).join(':')}::${g.slice(best + bestLen).join(':')}`;
}

const V4_OCTET = /^(0|[1-9][0-9]{0,2})$/;
const NIBBLE = /^[0-9a-f]$/;

/** Strict dotted-quad check on already-split parts: 4 decimal octets, no leading zeros, ≤ 255. */
function v4FromParts(parts: string[]): string | undefined {
  if (parts.length !== 4) return undefined;
  for (const p of parts) {
    if (!V4_OCTET.test(p) || Number(p) > 255) return undefined;
  }
  return parts.join('.');
}

/** The reverse-zone owner of an IP: `1.0.0.10.in-addr.arpa`, or 32 nibbles + `ip6.arpa`. No trailing dot. */
export function ipToReverseName(ip: string): string {
  if (isIP(ip) === 4) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  const hex = expandIpv6(ip).join('');
  return `${[...hex].reverse().join('.')}.ip6.arpa`;
}

/**
 * The IP a reverse name stands for (normalised), or undefined when the name is not exactly a full
 * address: 4 labels under in-addr.arpa, 32 single-hex-digit labels under ip6.arpa. Case-insensitive;
 * a trailing dot is allowed.
 */
export function reverseNameToIp(name: string): string | undefined {
  const n = name.toLowerCase().replace(/\.$/, '');
  if (n.endsWith('.in-addr.arpa')) {
    return v4FromParts(n.slice(0, -'.in-addr.arpa'.length).split('.').reverse());
  }
  if (n.endsWith('.ip6.arpa')) {
    const nibbles = n.slice(0, -'.ip6.arpa'.length).split('.');
    if (nibbles.length !== 32 || !nibbles.every((x) => NIBBLE.test(x))) return undefined;
    const hex = nibbles.reverse().join('');
    const groups: string[] = [];
    for (let i = 0; i < 32; i += 4) groups.push(hex.slice(i, i + 4));
    return compressIpv6(groups);
  }
  return undefined;
}

/**
 * Whether a name (no trailing dot) can be written in a message: labels of 1-63 printable ASCII
 * octets, 253 characters at most (255 octets on the wire). Kubernetes checks an ExternalName's
 * target and a load balancer's hostname as DNS-1123 subdomains, which bounds only the whole name
 * (kubernetes/kubernetes#8202): a label of 64 octets or more passes there, and written as it is
 * its length octet reads as a compression pointer, breaking every reply and transfer that holds it.
 */
export function fitsInMessage(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  let label = 0;
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c === 0x2e) {
      if (label === 0) return false;
      label = 0;
    } else if (c < 0x21 || c > 0x7e || ++label > 63) {
      return false;
    }
  }
  return label > 0;
}

/** The `_<port>._<proto>` labels of a named port's SRV name (`_https._tcp`). */
export function srvPortLabels(p: { name: string; protocol: string }): string {
  return `_${p.name}._${p.protocol.toLowerCase()}`;
}

/** The distinct `_<port>._<proto>` labels of the named ports among `ports` (an unnamed one has no SRV name). */
export function namedPortPrefixes(ports: readonly { name: string; protocol: string }[]): string[] {
  const out = new Set<string>();
  for (const p of ports) if (p.name) out.add(srvPortLabels(p));
  return [...out];
}

/**
 * The label naming a hostname-less endpoint (CoreDNS style): `10-0-0-1`; IPv6 in its compressed
 * form with ':' → '-' (`fd00::20` → `fd00--20`). Stable for an address, and parseDashedIp inverts it.
 */
export function dashedLabel(ip: string): string {
  return isIP(ip) === 6 ? normalizeIp(ip).replace(/:/g, '-') : ip.replace(/\./g, '-');
}

/**
 * A pod-style label back to its normalised IP: `10-1-2-3` → 10.1.2.3, `fd00--1` → fd00::1
 * (any IPv6 spelling with '-' for ':'). Undefined when the label is not an address.
 */
export function parseDashedIp(label: string): string | undefined {
  const l = label.toLowerCase();
  if (!/^[0-9a-f-]+$/.test(l)) return undefined; // also keeps out '%zone' suffixes that isIP accepts
  const parts = l.split('-');
  if (parts.length === 4) {
    const v4 = v4FromParts(parts);
    if (v4) return v4;
  }
  const v6 = l.replace(/-/g, ':');
  return isIP(v6) === 6 ? normalizeIp(v6) : undefined;
}

/** 4 or 6; 0 when not an IP literal. */
export function ipFamily(ip: string): 0 | 4 | 6 {
  return isIP(ip) as 0 | 4 | 6;
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Lower-cases A-Z only (DNS case-insensitivity is ASCII-only, RFC 4343). Names off the wire are
 * latin1 strings (one char per octet), where String#toLowerCase would also fold 0xC0-0xDE onto
 * 0xE0-0xFE and make two different names one. Pure ASCII (every real name) takes the fast path.
 */
export function asciiLower(s: string): string {
  if (!NON_ASCII.test(s)) return s.toLowerCase();
  let out = '';
  for (let i = 0; i < s.length; i++) out += String.fromCharCode(foldOctet(s.charCodeAt(i)));
  return out;
}

/** One octet (or latin1 char) with A-Z lower-cased and nothing else: asciiLower's rule, for names read as bytes. */
export function foldOctet(b: number): number {
  return b >= 0x41 && b <= 0x5a ? b | 0x20 : b;
}

/**
 * `a/b/…` as one flat string, for keys kept in the zone's maps. Array.join builds its result in
 * one piece; a template literal of 13 characters or more gives a rope (two strings and a node),
 * and its left part is a fresh copy each time (`ns1/` for every Service of ns1): 10,000 keys took
 * 846 KB joined against 1,825 KB as templates (heap snapshots). Lookups may build the same key
 * either way: equal strings are equal keys.
 */
export function joinKey(...parts: string[]): string {
  return parts.join('/');
}

/**
 * `s.lastIndexOf('.', from)`, as a loop. The builtin is a call into V8's runtime that the
 * optimizing compiler cannot inline; resolve/ looks for two or three dots in nearly every name
 * asked, and the calls were 4% of an NXDOMAIN's time in the handler (perf, the bench's mix).
 */
export function lastDot(s: string, from: number): number {
  for (let i = Math.min(Math.max(from, 0), s.length - 1); i >= 0; i--) if (s.charCodeAt(i) === 0x2e) return i;
  return -1;
}
