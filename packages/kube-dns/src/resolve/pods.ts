// `<dashed-ip>.<ns>.pod.<zone>`. labels = the labels before `pod.<zone>` (lower-case).
import { ipFamily, parseDashedIp } from '../records/names.js';
import { address, nodata, nxdomain, positive } from './answers.js';
import type { Ctx } from './context.js';
import type { Resolution } from './types.js';

export function resolvePod(ctx: Ctx, labels: string[]): Resolution {
  const { opts, zone, qtype } = ctx;
  const mode = opts.pods;
  if (mode === 'disabled' || labels.length > 2) return nxdomain(opts, 'static');
  const verified = mode === 'verified';
  const ns = labels[labels.length - 1]!;
  // a namespace filter may change with the cluster (--namespace-labels): then depend on everything
  if (opts.servesNamespace && !opts.servesNamespace(ns)) return nxdomain(opts, '*');
  const fixed = opts.servesNamespace ? '*' : 'static';
  if (labels.length === 1) {
    // `<ns>.pod.<zone>` is an empty non-terminal when pods exist below it: NODATA, not NXDOMAIN,
    // or resolvers that trust NXDOMAIN cuts (RFC 8020) would hide the pod names.
    if (!verified) return nodata(opts, fixed);
    return zone.hasPodsIn(ns) ? nodata(opts, '*') : nxdomain(opts, '*');
  }
  const ip = parseDashedIp(labels[0]!);
  if (!ip) return nxdomain(opts, 'static');
  if (verified && !zone.podHasIp(ns, ip)) return nxdomain(opts, '*');
  const dep = verified ? '*' : fixed;
  const v6 = ipFamily(ip) === 6;
  if (qtype === (v6 ? 'AAAA' : 'A')) return positive(opts, [address(ctx.owner, ip, v6, opts.ttl)], [], dep);
  return nodata(opts, dep);
}
