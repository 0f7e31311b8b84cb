// kube-dns --transfer-to (and the ConfigMap key transferTo): who may transfer the zones, and who
// is told about changes. Each entry is
//   CIDR          (10.0.0.0/8, fd00::/64): may transfer; not notified (a range has no one address)
//   IP[:port]     (192.0.2.53, [2001:db8::53]:5353): may transfer from that IP, and gets NOTIFY on
//                 the port (default 53) when the zones change
import { BlockList, isIP } from 'node:net';
import { parseIpNameserver, type Nameserver } from './nameserver.js';

export interface TransferAcl {
  /** As given, for logs. */
  entries: string[];
  allow: BlockList;
  notify: Nameserver[];
}

/** Throws an Error naming the bad entry. */
export function parseTransferTo(raw: string): TransferAcl {
  const allow = new BlockList();
  const notify: Nameserver[] = [];
  const entries = raw.split(',').map((s) => s.trim()).filter(Boolean);
  // "," would turn transfers on (a moving serial, the metrics) with nobody allowed; "" is "off"
  if (entries.length === 0 && raw.trim() !== '') throw new Error(`${JSON.stringify(raw)} names no CIDR or IP[:port] (leave it empty to turn transfers off)`);
  for (const entry of entries) {
    const slash = entry.indexOf('/');
    if (slash >= 0) {
      const ip = entry.slice(0, slash);
      const bits = entry.slice(slash + 1);
      const fam = isIP(ip);
      const prefix = /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
      if (fam === 0 || !(prefix >= 0 && prefix <= (fam === 4 ? 32 : 128))) throw new Error(`${JSON.stringify(entry)} is not a CIDR (e.g. 10.0.0.0/8)`);
      allow.addSubnet(ip, prefix, fam === 4 ? 'ipv4' : 'ipv6');
      continue;
    }
    const p = parseIpNameserver(entry);
    if (!p.ok) throw new Error(`${JSON.stringify(entry)} is not a CIDR or an IP[:port] (${p.error})`);
    allow.addAddress(p.value.host, p.value.family === 4 ? 'ipv4' : 'ipv6');
    notify.push(p.value);
  }
  return { entries, allow, notify };
}
