// (qname, qtype) → Resolution against the zone. Pure: no I/O, no clock. Class is IN here; the
// server handles other classes, ANY, EDNS, truncation and the pre-sync SERVFAIL.
import { asciiLower, lastDot } from '../records/names.js';
import type { Zone } from '../records/zone.js';
import { DNS_SCHEMA_VERSION, forward, nodata, nxdomain, positive, soa } from './answers.js';
import type { Ctx } from './context.js';
import { resolvePod } from './pods.js';
import { isReverseName, resolveReverse } from './reverse.js';
import { resolveService } from './services.js';
import type { Resolution, ResolveOptions } from './types.js';
import { findExternalZone, resolveExternal } from '../zones/external.js';

/** Longest ExternalName chain followed inside the zone. */
export const MAX_CNAME_CHAIN = 8;

/**
 * qname as the client wrote it (case kept for owner names; a trailing dot is tolerated; latin1,
 * one char per octet); compared case-insensitively (ASCII only). `lname`, when the caller already
 * has it (the server does), is qname without the trailing dot, A-Z lower-cased. Record names in
 * the result have no trailing dot (dns-packet style).
 *
 * `budget`: the most answer records the reply can carry (encode.ts answerBudget; Infinity, the
 * default, for a whole answer). The A and AAAA answers of a headless Service build no more: its
 * thousands of endpoints cost the records that can be sent, not all of them. SRV answers are
 * built whole, as each record's weight is 100 / the number of records in the whole answer.
 */
export function resolve(zone: Zone, qname: string, qtype: string, opts: ResolveOptions, lname?: string, budget = Infinity): Resolution {
  // a char code, not endsWith('.'): a builtin call on every query for a dot the server's names never have
  const owner = qname.charCodeAt(qname.length - 1) === 0x2e ? qname.slice(0, -1) : qname;
  const lower = lname ?? asciiLower(owner);
  const type = upperCase(qtype);
  if (inZone(lower, opts.zone)) return resolveTop(zone, opts, type, owner, lower, budget);
  if (isReverseName(lower)) return resolveReverse(zone, owner, lower, type, opts);
  if (opts.external) {
    const ez = findExternalZone(lower, opts.external);
    if (ez) return resolveExternal(zone, owner, lower, type, ez);
  }
  return forward(false, 'static');
}

/** The type in upper case. The server's already is, and toUpperCase() copies even then (24 bytes). */
function upperCase(qtype: string): string {
  for (let i = 0; i < qtype.length; i++) {
    const c = qtype.charCodeAt(i);
    if (c >= 0x61 && c <= 0x7a) return qtype.toUpperCase();
  }
  return qtype;
}

/**
 * One question inside the zone (the Ctx the rule modules get). A class rather than an object of
 * closures: one object, reused at the top level (resolveTop), and the CNAME-chain bookkeeping only
 * when a chain is met.
 */
class Question implements Ctx {
  private seen: Set<string> | undefined;
  private depth = 0;
  /** Set for the top-level question only: a chained name's answer is whole. */
  budget = Infinity;
  constructor(
    public zone: Zone,
    public opts: ResolveOptions,
    public qtype: string,
    public owner: string,
  ) {}

  /** Makes this the question for another name (see resolveTop). */
  reset(zone: Zone, opts: ResolveOptions, qtype: string, owner: string, budget: number): void {
    this.budget = budget;
    this.zone = zone;
    this.opts = opts;
    this.qtype = qtype;
    this.owner = owner;
    this.seen = undefined;
    this.depth = 0;
  }

  lookupInZone(name: string): Resolution | undefined {
    this.seen ??= new Set([asciiLower(this.owner)]);
    if (this.seen.has(name) || this.depth >= MAX_CNAME_CHAIN) return undefined;
    this.seen.add(name);
    this.depth++;
    // the chained name's records are owned by that name
    const sub = new Question(this.zone, this.opts, this.qtype, name);
    sub.seen = this.seen;
    sub.depth = this.depth;
    const r = resolveInZone(sub, name);
    this.depth = sub.depth;
    return r;
  }
}

/**
 * The top-level Question is reused: resolution is synchronous and nothing keeps its ctx past the
 * return (an ExternalName chain makes Questions of its own), so a name asked costs no Question
 * object (72 bytes a query, most of them NXDOMAIN: garbage sets how often the young generation
 * is collected under load, docs/hot-path.md). Taken out while in use, so a resolve() called from
 * inside another gets a fresh one.
 */
let spare: Question | undefined;

function resolveTop(zone: Zone, opts: ResolveOptions, qtype: string, owner: string, lname: string, budget: number): Resolution {
  const q = spare ?? new Question(zone, opts, qtype, owner);
  spare = undefined;
  q.reset(zone, opts, qtype, owner, budget);
  try {
    return resolveInZone(q, lname);
  } finally {
    spare = q;
  }
}

function inZone(lname: string, z: string): boolean {
  return lname === z || (lname.length > z.length && lname.endsWith(z) && lname[lname.length - z.length - 1] === '.');
}

/** Whether lname[start, end) is the label `word`: compared in place, no slice. */
function labelIs(lname: string, start: number, end: number, word: string): boolean {
  return end - start === word.length && lname.startsWith(word, start);
}

function resolveInZone(ctx: Ctx, lname: string): Resolution {
  const { opts, qtype } = ctx;
  const z = opts.zone;
  if (lname.length === z.length) return resolveApex(ctx);
  // The labels are found by walking the dots from the right, not by split(): most names asked
  // here are search-path expansions that end in NXDOMAIN after a look at two labels, and a split
  // would allocate an array and a string for every label of them (docs/hot-path.md).
  const end = lname.length - z.length - 1; // the dot before the zone
  const cut = lastDot(lname, end - 1); // the dot before the top label, or -1
  const single = cut < 0;
  if (labelIs(lname, cut + 1, end, 'svc')) {
    if (single) return nodata(opts, 'static');
    const nsCut = lastDot(lname, cut - 1);
    if (nsCut < 0) return resolveNamespace(ctx, lname.slice(0, cut));
    return resolveService(ctx, lname, nsCut, cut);
  }
  if (labelIs(lname, cut + 1, end, 'pod')) {
    if (single) return nodata(opts, 'static');
    return resolvePod(ctx, lname.slice(0, cut).split('.'));
  }
  if (labelIs(lname, cut + 1, end, 'dns-version')) {
    if (!single) return nxdomain(opts, 'static');
    return qtype === 'TXT'
      ? positive(opts, [{ name: ctx.owner, type: 'TXT', ttl: opts.ttl, class: 'IN', data: DNS_SCHEMA_VERSION }], [], 'static')
      : nodata(opts, 'static');
  }
  if (labelIs(lname, cut + 1, end, 'dns')) {
    // `ns.dns.<zone>` is the SOA/NS host; it exists but we know no address for it.
    if (single || (cut === 2 && lname.startsWith('ns.'))) return nodata(opts, 'static');
    return nxdomain(opts, 'static');
  }
  return nxdomain(opts, 'static');
}

function resolveApex(ctx: Ctx): Resolution {
  const { opts, qtype, owner } = ctx;
  // with zone transfer on the serial follows every change: the cached SOA must too
  if (qtype === 'SOA') return positive(opts, [soa(owner, opts)], [], opts.dynamicSerial ? '*' : 'static');
  if (qtype === 'NS') {
    return positive(opts, [{ name: owner, type: 'NS', ttl: opts.ttl, class: 'IN', data: `ns.dns.${opts.zone}` }], [], 'static');
  }
  return nodata(opts, 'static');
}

/** `<ns>.svc.<zone>` exists while the namespace has a service. */
function resolveNamespace(ctx: Ctx, ns: string): Resolution {
  const { zone, opts } = ctx;
  const exists = ns === '*' && opts.wildcards ? !zone.namespaces().next().done : zone.hasNamespace(ns);
  return exists ? nodata(opts, '*') : nxdomain(opts, '*');
}
