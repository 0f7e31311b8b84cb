// /etc/resolv.conf: the nameservers used when the ConfigMap names no upstreams.
import { isIP } from 'node:net';
import type { Nameserver } from './nameserver.js';

export function parseResolvConf(text: string): Nameserver[] {
  const out: Nameserver[] = [];
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    if (!m) continue;
    const host = m[1]!.replace(/%.*$/, ''); // a zone index (fe80::1%eth0) is not for us
    const family = isIP(host);
    if (family) out.push({ host, port: 53, family: family as 4 | 6, raw: m[1]! });
  }
  return out;
}
