// Name helpers shared by the record builders and the resolver. Pure.
import { isIP } from 'node:net';

/** Canonical text of an IP: IPv4 as is, IPv6 compressed lower-case (Go's net.IP.String()). */
export function normalizeIp(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  return compressIpv6(expandIpv6(ip));
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
