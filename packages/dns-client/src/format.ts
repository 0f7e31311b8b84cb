// Presentation of records, dig-style, for logs and test assertions.
import { Buffer } from 'node:buffer';
import type * as dnsPacket from 'dns-packet';

/** The record data as dig prints it: `10.0.0.1`, `10 100 443 a.b.`, `"1.1.0"`. */
export function rdataText(rr: dnsPacket.Answer): string {
  const r = rr as { type: string; data?: unknown };
  const d = r.data as never;
  switch (r.type) {
    case 'A':
    case 'AAAA':
      return String(d);
    case 'CNAME':
    case 'PTR':
    case 'NS':
    case 'DNAME':
      return `${String(d)}.`.replace(/\.\.$/, '.');
    case 'SRV': {
      const s = d as dnsPacket.SrvData;
      return `${s.priority ?? 0} ${s.weight ?? 0} ${s.port} ${s.target}.`;
    }
    case 'TXT': {
      const parts = Array.isArray(d) ? (d as (string | Buffer)[]) : [d as string | Buffer];
      return parts.map((p) => JSON.stringify(p.toString())).join(' ');
    }
    case 'SOA': {
      const s = d as dnsPacket.SoaData;
      return `${s.mname}. ${s.rname}. ${s.serial} ${s.refresh} ${s.retry} ${s.expire} ${s.minimum}`;
    }
    default:
      return JSON.stringify(d);
  }
}

/** `name TTL CLASS TYPE data`, one record as dig prints it. */
export function rrText(rr: dnsPacket.Answer): string {
  const r = rr as { name: string; ttl?: number; class?: string; type: string };
  return `${r.name}.\t${r.ttl ?? 0}\t${r.class ?? 'IN'}\t${r.type}\t${rdataText(rr)}`;
}

/** The data of every record of `type` (or all but OPT) in a section. */
export function datas(section: dnsPacket.Answer[] | undefined, type?: string): string[] {
  return (section ?? []).filter((a) => (type ? a.type === type : a.type !== 'OPT')).map(rdataText);
}
