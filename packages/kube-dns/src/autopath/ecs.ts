// The EDNS0 client-subnet option (RFC 7871) of a query, read from its bytes. Pure.
// dnsmasq, run with --add-subnet=32,128, puts the asking pod's address into every query it
// forwards to kube-dns: behind dnsmasq that option is the only way to know who asked.
import { Buffer } from 'node:buffer';
import { isIP } from 'node:net';
import { normalizeIp } from '../records/names.js';
import { skipName } from '../server/wire.js';

export const OPTION_CLIENT_SUBNET = 8;
const TYPE_OPT = 41;

export type ClientSubnet =
  /** No OPT record, or an OPT record without a client-subnet option. */
  | { kind: 'none' }
  /** Present but not a valid option (RFC 7871 §6): wrong family, lengths that disagree, bits set past the prefix. */
  | { kind: 'malformed'; reason: string }
  /** address: the textual address with the prefix's bits (the rest zero); prefix: source prefix length. */
  | { kind: 'subnet'; family: 4 | 6; prefix: number; address: string };

/**
 * Finds the client-subnet option in a query. `questionEnd` is the offset after the question.
 * Never throws: any bytes that cannot be walked are 'malformed'.
 */
export function readClientSubnet(buf: Buffer, questionEnd: number): ClientSubnet {
  if (buf.length < 12) return { kind: 'malformed', reason: 'shorter than a header' };
  const rrs = buf.readUInt16BE(6) + buf.readUInt16BE(8) + buf.readUInt16BE(10);
  const firstAdditional = buf.readUInt16BE(6) + buf.readUInt16BE(8);
  let p = questionEnd;
  let found: ClientSubnet = { kind: 'none' };
  for (let i = 0; i < rrs; i++) {
    const nameEnd = skipName(buf, p);
    if (nameEnd < 0 || nameEnd + 10 > buf.length) return { kind: 'malformed', reason: 'resource record cut short' };
    const type = buf.readUInt16BE(nameEnd);
    const rdlen = buf.readUInt16BE(nameEnd + 8);
    const rdata = nameEnd + 10;
    if (rdata + rdlen > buf.length) return { kind: 'malformed', reason: 'resource record runs past the end' };
    if (type === TYPE_OPT && i >= firstAdditional) {
      for (let o = rdata; o < rdata + rdlen; ) {
        if (o + 4 > rdata + rdlen) return { kind: 'malformed', reason: 'EDNS0 option header cut short' };
        const code = buf.readUInt16BE(o);
        const len = buf.readUInt16BE(o + 2);
        if (o + 4 + len > rdata + rdlen) return { kind: 'malformed', reason: 'EDNS0 option runs past the OPT record' };
        if (code === OPTION_CLIENT_SUBNET) {
          // two of them make the asker ambiguous: refuse rather than pick one
          if (found.kind !== 'none') return { kind: 'malformed', reason: 'more than one client-subnet option' };
          found = parseOption(buf.subarray(o + 4, o + 4 + len));
          if (found.kind === 'malformed') return found;
        }
        o += 4 + len;
      }
    }
    p = rdata + rdlen;
  }
  return found;
}

/** The option's data: FAMILY (2), SOURCE PREFIX (1), SCOPE PREFIX (1), ADDRESS (just the prefix's octets). */
export function parseOption(d: Buffer): ClientSubnet {
  if (d.length < 4) return { kind: 'malformed', reason: 'client-subnet option shorter than 4 octets' };
  const familyCode = d.readUInt16BE(0);
  const prefix = d[2]!;
  const scope = d[3]!;
  const family = familyCode === 1 ? 4 : familyCode === 2 ? 6 : 0;
  if (family === 0) return { kind: 'malformed', reason: `client-subnet family ${familyCode} (want 1 or 2)` };
  const bits = family === 4 ? 32 : 128;
  if (prefix > bits) return { kind: 'malformed', reason: `client-subnet source prefix /${prefix} longer than the address` };
  if (scope !== 0) return { kind: 'malformed', reason: 'client-subnet scope prefix set in a query' };
  const octets = Math.ceil(prefix / 8);
  if (d.length - 4 !== octets) return { kind: 'malformed', reason: `client-subnet address of ${d.length - 4} octets for a /${prefix} prefix` };
  if (prefix % 8 !== 0 && (d[4 + octets - 1]! & (0xff >> prefix % 8)) !== 0) {
    return { kind: 'malformed', reason: 'client-subnet address has bits set past its prefix' };
  }
  if (family === 4) {
    // no Buffer for the common case: the octets present, zeros for the rest
    const o = (i: number) => (i < octets ? d[4 + i]! : 0);
    return { kind: 'subnet', family, prefix, address: `${o(0)}.${o(1)}.${o(2)}.${o(3)}` };
  }
  const addr = Buffer.alloc(16);
  d.copy(addr, 0, 4);
  return { kind: 'subnet', family, prefix, address: ipv6Text(addr) };
}

/** Colon-separated groups; normalizeIp turns them into the form the pod index uses. */
function ipv6Text(a: Buffer): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(a.readUInt16BE(i).toString(16));
  return normalizeIp(groups.join(':'));
}

/** kube-dns trusts a client-subnet option only from its own dnsmasq, i.e. over loopback. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  if (address === '::1') return true;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return isIP(v4) === 4 && v4.startsWith('127.');
}
