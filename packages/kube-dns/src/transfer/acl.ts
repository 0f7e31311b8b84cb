// Whether a client may transfer the zones (--transfer-to / the ConfigMap key transferTo; the
// entries are parsed by @kube-dns/config so a bad ConfigMap value is rejected like any other key).
import { isIP } from 'node:net';
import type { TransferAcl } from '@kube-dns/config';

export { parseTransferTo, type TransferAcl } from '@kube-dns/config';

/** The remote address of a connection, IPv4-mapped IPv6 (::ffff:a.b.c.d) taken as the IPv4 it is. */
export function allowed(acl: TransferAcl, address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  const fam = isIP(v4);
  if (fam === 0) return false;
  return acl.allow.check(v4, fam === 4 ? 'ipv4' : 'ipv6');
}
