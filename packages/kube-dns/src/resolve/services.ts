// Names at and under `<svc>.<ns>.svc.<zone>`: ClusterIP, headless and ExternalName services, and
// the legacy `*` wildcards (only with opts.wildcards). Every name here depends on one service
// (dep 'svc/<ns>/<svc>'), except chased in-zone CNAMEs (dep '*') and wildcards over services or
// namespaces: `*.<ns>` depends on the namespace ('ns/<ns>'), `<svc>.*` on every service of that
// name ('name/<svc>'), `*.*` on everything. A wildcard visits at most WILDCARD_MAX_SERVICES
// services and answers at most WILDCARD_MAX_ANSWERS records, whatever the size of the zone.
import type { Answer } from 'dns-packet';
import { ipFamily, lastDot, normalizeIp, srvPortLabels } from '../records/names.js';
import type { PortInfo } from '../records/types.js';
import { labelled, namesOf, type HeadlessEndpoint, type HeadlessView } from '../records/headless.js';
import { nameDep, namespaceDep, serviceDep, type ServiceEntry } from '../records/zone.js';
import { address, cname, nodata, nxdomain, positive, srv } from './answers.js';
import type { Ctx } from './context.js';
import type { Resolution } from './types.js';

/** What one service contributes to an answer. exists=false: the name is not there (NXDOMAIN). */
interface Part {
  exists: boolean;
  answers: Answer[];
  additionals: Answer[];
}

const MISSING: Part = { exists: false, answers: [], additionals: [] };
const present = (answers: Answer[] = [], additionals: Answer[] = []): Part => ({ exists: true, answers, additionals });

const isV6 = (ip: string): boolean => ip.includes(':');

function wants(qtype: string, v6: boolean): boolean {
  return qtype === (v6 ? 'AAAA' : 'A');
}

/** Services a service/namespace wildcard looks at, at most. */
export const WILDCARD_MAX_SERVICES = 256;
/** Records a service/namespace wildcard answers with, at most (64 A records fit 1232 bytes). */
export const WILDCARD_MAX_ANSWERS = 64;

/** `_<name>` / `_<proto>` labels; `*` matches any (with wildcards on). */
function matches(label: string, value: string, wild: boolean): boolean {
  return (wild && label === '*') || label === `_${value}`;
}

function isPortLabel(label: string, wild: boolean): boolean {
  return (wild && label === '*') || label.startsWith('_');
}

const NO_LABELS = Object.freeze([]) as unknown as string[];

/** The labels before `<svc>` (which starts at svcStart). */
function prefixLabels(lname: string, svcStart: number): string[] {
  return svcStart === 0 ? NO_LABELS : lname.slice(0, svcStart - 1).split('.');
}

/**
 * A name `[<prefix>.]<svc>.<ns>.svc.<zone>`, lower-cased, given with the offsets of the dots
 * around `<ns>`: lname[nsCut] and lname[svcCut] (the one before `svc`). The prefix labels are
 * split only once the service is known to exist: a name under no service costs two slices.
 */
export function resolveService(ctx: Ctx, lname: string, nsCut: number, svcCut: number): Resolution {
  const ns = lname.slice(nsCut + 1, svcCut);
  const svcStart = lastDot(lname, nsCut - 1) + 1;
  const svc = lname.slice(svcStart, nsCut);
  if (ctx.opts.wildcards && (svc === '*' || ns === '*')) return resolveWildcard(ctx, svc, ns, prefixLabels(lname, svcStart));
  const dep = serviceDep(ns, svc);
  const e = ctx.zone.getService(ns, svc);
  if (!e) return nxdomain(ctx.opts, dep);
  const prefix = prefixLabels(lname, svcStart);
  if (e.info.kind === 'ExternalName') return resolveExternalName(ctx, e, prefix, dep);
  // An SRV answer is built whole: each record's weight is 100 / the number of records in the answer
  const budget = ctx.qtype === 'SRV' ? Infinity : ctx.budget;
  const part = serviceRecords(ctx, e, prefix, budget);
  if (!part.exists) return nxdomain(ctx.opts, dep);
  const r = positive(ctx.opts, part.answers, part.additionals, dep);
  // A cut answer must still overflow the reply (resolve()): should repeated records have been
  // dropped from it (none are built today), it is built whole
  if (part.answers.length >= budget && r.answers.length < budget) {
    const whole = serviceRecords(ctx, e, prefix);
    return positive(ctx.opts, whole.answers, whole.additionals, dep);
  }
  return r;
}

/**
 * `*` as service and/or namespace: the union over matching services (ExternalName ones excluded),
 * bounded in services visited and records answered.
 */
function resolveWildcard(ctx: Ctx, svc: string, ns: string, prefix: string[]): Resolution {
  const { zone } = ctx;
  let exists = false;
  const answers: Answer[] = [];
  const additionals: Answer[] = [];
  const dep = ns === '*' ? (svc === '*' ? '*' : nameDep(svc)) : namespaceDep(ns);
  let visited = 0;
  const entries = ns === '*' ? (svc === '*' ? zone.allServices() : zone.servicesNamed(svc)) : svc === '*' ? zone.servicesIn(ns) : [];
  for (const e of entries) {
    if (++visited > WILDCARD_MAX_SERVICES || answers.length >= WILDCARD_MAX_ANSWERS) break;
    if (e.info.kind === 'ExternalName') continue;
    // the budget left: a headless service of thousands of endpoints costs no more than what fits
    const part = serviceRecords(ctx, e, prefix, WILDCARD_MAX_ANSWERS - answers.length);
    if (!part.exists) continue;
    exists = true;
    for (const a of part.answers) if (answers.length < WILDCARD_MAX_ANSWERS) answers.push(a);
    for (const a of part.additionals) if (additionals.length < WILDCARD_MAX_ANSWERS) additionals.push(a);
  }
  return exists ? positive(ctx.opts, answers, additionals, dep) : nxdomain(ctx.opts, dep);
}

/** `limit`: build at most that many answers (a wildcard's budget, or the reply's: resolve()). */
function serviceRecords(ctx: Ctx, e: ServiceEntry, prefix: string[], limit = Infinity): Part {
  // `*.<svc>` stands for the service's own addresses, as in the original kube-dns.
  const p = ctx.opts.wildcards && prefix.length === 1 && prefix[0] === '*' ? [] : prefix;
  if (e.info.kind !== 'ClusterIP') return headlessRecords(ctx, e, p, limit);
  // --ignore-empty-service: no ready endpoint, no name (as a headless service without endpoints)
  if (ctx.opts.ignoreEmptyService && !ctx.zone.hasReadyEndpoint(e, ctx.opts.zone)) return MISSING;
  return clusterIpRecords(ctx, e, p);
}

/** A present name with no record of the type asked (NODATA): shared, never mutated. */
const EMPTY = Object.freeze({ exists: true, answers: Object.freeze([]) as unknown as Answer[], additionals: Object.freeze([]) as unknown as Answer[] }) as Part;

function serviceAddresses(fqdn: string, clusterIPs: string[], ttl: number): Answer[] {
  return clusterIPs.map((ip) => address(fqdn, ip, isV6(ip), ttl));
}

function clusterIpRecords(ctx: Ctx, e: ServiceEntry, prefix: string[]): Part {
  const { qtype, owner, opts } = ctx;
  const ttl = opts.ttl;
  const { clusterIPs, ports } = e.info;

  if (prefix.length === 0) {
    if (qtype === 'A' || qtype === 'AAAA') {
      // the common case, and half of it (AAAA of an IPv4 service) NODATA: no array unless a match
      let answers: Answer[] | undefined;
      for (const ip of clusterIPs) if (wants(qtype, isV6(ip))) (answers ??= []).push(address(owner, ip, isV6(ip), ttl));
      return answers ? present(answers) : EMPTY;
    }
    if (qtype !== 'SRV') return EMPTY;
    const fqdn = ctx.zone.fqdn(e, opts.zone);
    return present(ports.map((p) => srv(owner, p.port, fqdn, ttl)), serviceAddresses(fqdn, clusterIPs, ttl));
  }
  if (prefix.length === 1) {
    const proto = prefix[0]!;
    return proto.startsWith('_') && ports.some((p) => p.name && matches(proto, p.protocol.toLowerCase(), false)) ? present() : MISSING;
  }
  const wild = opts.wildcards === true;
  if (prefix.length === 2 && isPortLabel(prefix[0]!, wild) && isPortLabel(prefix[1]!, wild)) {
    const matched = ports.filter((p) => namedPortMatches(p, prefix[0]!, prefix[1]!, wild));
    if (matched.length === 0) return MISSING;
    if (qtype !== 'SRV') return present();
    const fqdn = ctx.zone.fqdn(e, opts.zone);
    return present(matched.map((p) => srv(owner, p.port, fqdn, ttl)), serviceAddresses(fqdn, clusterIPs, ttl));
  }
  return MISSING;
}

function namedPortMatches(p: PortInfo, portLabel: string, protoLabel: string, wild: boolean): boolean {
  return p.name !== '' && matches(portLabel, p.name, wild) && matches(protoLabel, p.protocol.toLowerCase(), wild);
}

const NO_ENDPOINTS: readonly HeadlessEndpoint[] = Object.freeze([]);

function headlessRecords(ctx: Ctx, e: ServiceEntry, prefix: string[], limit: number): Part {
  const { qtype, owner, opts } = ctx;
  const ttl = opts.ttl;
  const view = ctx.zone.headless(e, opts.zone);
  // No counted endpoints: the service name and everything under it do not exist (spec 2.4.1).
  if (view.endpoints.length === 0) return MISSING;

  // the addresses of the SRV targets' names: of every endpoint each target's label names
  const targetAddresses = (targets: HeadlessEndpoint[]): Answer[] => {
    const out: Answer[] = [];
    const done = new Set<string>();
    for (const t of targets) {
      if (out.length >= limit) break;
      if (done.has(t.label)) continue;
      done.add(t.label);
      for (const ep of labelled(view, t.label, t) ?? NO_ENDPOINTS) out.push(address(ep.fqdn, ep.ip, ep.v6, ttl));
    }
    return out;
  };

  if (prefix.length === 0) {
    if (qtype === 'A' || qtype === 'AAAA') return present(addresses(view.endpoints, qtype, owner, ttl, limit));
    if (qtype !== 'SRV') return present();
    const srvs: Answer[] = [];
    const targets: HeadlessEndpoint[] = [];
    const target = (ep: HeadlessEndpoint): void => {
      targets.push(ep);
      if (ep.ports.length === 0) srvs.push(srv(owner, 0, ep.fqdn, ttl));
      for (const p of ep.ports) srvs.push(srv(owner, p.port, ep.fqdn, ttl));
    };
    for (const ep of view.endpoints) {
      if (srvs.length >= limit) break;
      target(ep);
      if (ep.also !== undefined) for (const other of ep.also) target(other);
    }
    return present(srvs, targetAddresses(targets));
  }
  if (prefix.length === 1) {
    const label = prefix[0]!;
    if (label.startsWith('_')) return view.namedProtocols.has(label.slice(1)) ? present() : MISSING;
    const eps = labelled(view, label);
    if (!eps) return MISSING;
    if (qtype !== 'A' && qtype !== 'AAAA') return present();
    return present(addresses(eps, qtype, owner, ttl, limit));
  }
  const wild = opts.wildcards === true;
  if (prefix.length === 2 && isPortLabel(prefix[0]!, wild) && isPortLabel(prefix[1]!, wild)) {
    const srvs: Answer[] = [];
    const targets: HeadlessEndpoint[] = [];
    const target = (ep: HeadlessEndpoint): void => {
      const n = srvs.length;
      for (const p of ep.ports) if (namedPortMatches(p, prefix[0]!, prefix[1]!, wild)) srvs.push(srv(owner, p.port, ep.fqdn, ttl));
      if (srvs.length > n) targets.push(ep);
    };
    for (const ep of view.endpoints) {
      if (srvs.length >= limit) break;
      target(ep);
      if (ep.also !== undefined) for (const other of ep.also) target(other);
    }
    if (srvs.length === 0) return MISSING;
    if (qtype !== 'SRV') return present();
    return present(srvs, targetAddresses(targets));
  }
  return MISSING;
}

/**
 * For a zone transfer: every record of a headless service (A/AAAA and SRV at its own name, each
 * endpoint's name, its named ports' SRV), about `piece` records at a time, so that a service of
 * thousands of endpoints is not one step of the build (as one answer, 20,000 endpoints held the
 * event loop ~100 ms). The records are those of headlessRecords above; SRV ones are deduplicated
 * and weighted over their whole name as one answer is (dedupe, finishSrv): a first pass gives the
 * addresses and keeps each name's distinct `port target` keys, a second gives each SRV once with
 * its name's weight.
 */
export function* headlessRecordsInPieces(view: HeadlessView, fqdn: string, ttl: number, piece: number): Generator<Answer[]> {
  const srvKeys = new Map<string, Set<string>>([[fqdn, new Set()]]);
  const apex = srvKeys.get(fqdn)!;
  let out: Answer[] = [];
  for (const address0 of view.endpoints) {
    out.push(address(fqdn, address0.ip, address0.v6, ttl));
    for (const ep of namesOf(address0)) {
      out.push(address(ep.fqdn, ep.ip, ep.v6, ttl));
      if (ep.ports.length === 0) apex.add(`0 ${ep.fqdn}`);
      for (const p of ep.ports) {
        apex.add(`${p.port} ${ep.fqdn}`);
        if (!p.name) continue;
        const owner = `${srvPortLabels(p)}.${fqdn}`;
        let keys = srvKeys.get(owner);
        if (!keys) srvKeys.set(owner, (keys = new Set()));
        keys.add(`${p.port} ${ep.fqdn}`);
      }
    }
    if (out.length < piece) continue;
    yield out;
    out = [];
  }
  for (const [owner, keys] of srvKeys) {
    const weight = Math.floor(100 / keys.size);
    for (const k of keys) {
      const space = k.indexOf(' ');
      out.push(srv(owner, Number(k.slice(0, space)), k.slice(space + 1), ttl, weight));
      if (out.length < piece) continue;
      yield out;
      out = [];
    }
  }
  yield out;
}

/** A or AAAA records of the endpoints of the family asked, at most `limit`. */
function addresses(eps: readonly HeadlessEndpoint[], qtype: string, owner: string, ttl: number, limit: number): Answer[] {
  const out: Answer[] = [];
  for (const ep of eps) {
    if (out.length >= limit) break;
    if (wants(qtype, ep.v6)) out.push(address(owner, ep.ip, ep.v6, ttl));
  }
  return out;
}

function resolveExternalName(ctx: Ctx, e: ServiceEntry, prefix: string[], dep: string): Resolution {
  const { qtype, owner, opts } = ctx;
  if (prefix.length > 0) return nxdomain(opts, dep);
  const target = e.info.externalName;
  if (ipFamily(target) !== 0) {
    // An IP-looking externalName gives a plain address record, as the original does (an
    // IPv4-mapped one an A record: the family is the normalized address's).
    const ip = normalizeIp(target);
    const v6 = isV6(ip);
    return wants(qtype, v6) ? positive(opts, [address(owner, ip, v6, opts.ttl)], [], dep) : nodata(opts, dep);
  }
  if (!target) return nodata(opts, dep);
  const record = cname(owner, target, opts.ttl);
  if (qtype === 'CNAME') return positive(opts, [record], [], dep);
  const z = opts.zone;
  // in the zone, unless a stub domain inside it takes the name (then chased through its servers)
  if ((target === z || target.endsWith(`.${z}`)) && !opts.forwardedInZone?.(target)) {
    const sub = ctx.lookupInZone(target);
    // A loop or an over-long chain: stop here with the CNAME (what authoritative servers do).
    if (!sub) return positive(opts, [record], [], '*');
    return { ...sub, answers: [record, ...sub.answers], aa: true, dep: '*' };
  }
  return { ...positive(opts, [record], [], dep), chase: target };
}
