// PTR questions under in-addr.arpa / ip6.arpa. Only full addresses we own are answered here;
// everything else in those zones (other types, partial names, unknown IPs) belongs upstream.
import { reverseNameToIp } from '../records/names.js';
import type { Zone } from '../records/zone.js';
import { forward, positive, ptr } from './answers.js';
import type { Resolution, ResolveOptions } from './types.js';

export function isReverseName(lname: string): boolean {
  return (
    lname === 'in-addr.arpa' || lname.endsWith('.in-addr.arpa') || lname === 'ip6.arpa' || lname.endsWith('.ip6.arpa')
  );
}

/** The reverse map changes with any service or slice: dep '*'. */
export function resolveReverse(zone: Zone, owner: string, lname: string, qtype: string, opts: ResolveOptions): Resolution {
  if (qtype !== 'PTR') return forward(true, '*');
  const ip = reverseNameToIp(lname);
  if (!ip) return forward(true, '*');
  const targets = zone.ptrTargets(ip, opts.zone);
  if (targets.length === 0) return forward(true, '*');
  return positive(
    opts,
    targets.map((t) => ptr(owner, t, opts.ttl)),
    [],
    '*',
  );
}
