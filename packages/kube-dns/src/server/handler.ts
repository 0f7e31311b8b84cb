// One entry point for every query: handle(query bytes, transport) → reply bytes. The UDP and
// TCP listeners only move bytes; tests can drive this directly (as fastify's inject does).
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import * as dnsPacket from 'dns-packet';
import * as dnsTypes from 'dns-packet/types.js';
import type { Logger } from '@kube-dns/config';
import type { Transport } from '@kube-dns/dns-client';
import { buildQuery } from '@kube-dns/dns-client';
import type { Autopath, Walked } from '../autopath/autopath.js';
import type { AbsentNames } from '../resolve/absent.js';
import type { ZoneReader } from '../records/types.js';
import type { Resolution } from '../resolve/types.js';
import { QUESTION_NAME_ONLY, answerBudget, encodeNegative, encodeRcode, encodeReply, fitRelayed, rcodeNumber, relayedEdns, replyLimit } from './encode.js';
import { MalformedQueries } from './malformed.js';
import { DROP } from './reply-budget.js';
import { ResponseCache } from './response-cache.js';
import { isFramed, transferUnderway } from '../transfer/messages.js';
import { rotateAnswers, turnKey } from './rotate.js';
import { CLASS_IN, Flag, RCODE, TYPE_ANY, errorReply, parseQuery, type ParsedQuery } from './wire.js';

/**
 * dns-packet's name of a type, taken from its module once. In the bundle a CommonJS module's
 * exports are read through a getter per property, whose keyed load is megamorphic: one per query
 * if looked up at each call (perf, the bench's mix).
 */
const typeName = dnsTypes.toString;

/** 'A', 'AAAA', ... or 'UNKNOWN_<n>' for types dns-packet does not know. */
export const qtypeName = (n: number): string => typeName(n);

export type System = 'auth' | 'recursive' | 'reverse';

/**
 * What the handler reports per query (metrics). Positional on purpose: this runs for every query
 * and an event object per call is garbage the young generation has to collect.
 *   system: skydns' label — auth (our zone), recursive (forwarded), reverse (PTR)
 */
export interface QueryObserver {
  /** `truncated`: the reply has TC (cut to the client's UDP limit, ours or an upstream's). */
  observe(qtype: number, rcode: number, transport: Transport, system: System, seconds: number, size: number, cacheHit: boolean, truncated?: boolean): void;
}

export interface Forwarding {
  /**
   * The reply; undefined: answer SERVFAIL; DROP: send nothing (forward/forwarder.ts). `peerPort`:
   * the client's port, when the query is a client's (a forward of ours come back is told by it).
   */
  forward(query: Buffer, lname: string, transport: Transport, peerPort?: number): Promise<Buffer | undefined | typeof DROP>;
}

export interface HandlerOptions {
  zone: ZoneReader;
  /** (name as asked, qtype name, the name A-Z lower-cased) → resolution against the current zone. */
  /** `budget`: the most answer records the reply can carry (answerBudget); absent, a whole answer. */
  resolve: (name: string, qtype: string, lname: string, budget?: number) => Resolution;
  forwarder: Forwarding;
  /**
   * Stub domains inside our zone (forward/upstreams.ts): their names are forwarded before
   * anything else. `any` is read first on every query: the name's string is built only when true
   * (a cache hit and a search-path expansion never build it).
   */
  stubInZone?: { readonly any: boolean; covers(lname: string): boolean };
  isSynced: () => boolean;
  log: Logger;
  observer?: QueryObserver;
  cacheEntries?: number;
  /** Bound of the response cache in bytes (--response-cache-bytes). */
  cacheBytes?: number;
  /** --log-queries (querylog/query-log.ts). */
  queryLog?: QueryLogSink;
  /** --autopath (autopath/autopath.ts): completes a pod's search path on NXDOMAIN. */
  autopath?: Autopath;
  /**
   * The names resolve() would answer NXDOMAIN that can be told from the question's bytes
   * (resolve/absent.ts): answered without building the name or resolving it. Not used with
   * autopath, nor before the first sync.
   */
  absent?: AbsentNames;
  /** --transfer-to (transfer/transfer.ts); without it every AXFR/IXFR is REFUSED. */
  transfer?: { answer(query: Buffer, q: ParsedQuery, transport: Transport, address: string | undefined): Buffer | Promise<Buffer> };
  /** Malformed queries answered per second at most; the rest are dropped (server/malformed.ts). */
  malformedRepliesPerSecond?: number;
}

/**
 * `arpa` or a name under it (the reverse zones). The last letter first: most in-zone names end in
 * the cluster domain's last letter, and that one compare spares them a call to endsWith.
 */
function isArpa(lname: string): boolean {
  return lname.charCodeAt(lname.length - 1) === 0x61 && (lname === 'arpa' || lname.endsWith('.arpa'));
}

/**
 * isArpa from the question's bytes, for a response-cache hit, which builds no name string: the
 * wire name ends in the label `arpa` (any case) and the root. (A label whose own last octets are
 * \x04 then "arpa" would pass too: it only decides a metric's system label.)
 */
function questionIsArpa(query: Buffer, q: ParsedQuery): boolean {
  const end = q.nameOffset + q.nameLength;
  return (
    q.nameLength >= 6 &&
    query[end - 6] === 4 &&
    (query[end - 5]! | 0x20) === 0x61 &&
    (query[end - 4]! | 0x20) === 0x72 &&
    (query[end - 3]! | 0x20) === 0x70 &&
    (query[end - 2]! | 0x20) === 0x61
  );
}

/** The rcode for a meta-type in the question: FORMERR for OPT (41), TKEY (249) and TSIG (250), NOTIMP for MAILB (253) and MAILA (254). */
function metaTypeRcode(qtype: number): number | undefined {
  if (qtype === 41 || qtype === 249 || qtype === 250) return RCODE.FORMERR;
  if (qtype === 253 || qtype === 254) return RCODE.NOTIMP;
  return undefined;
}

/** AXFR (252) and IXFR (251): zone transfers, never answered by the resolver. */
const isTransfer = (qtype: number): boolean => qtype === 252 || qtype === 251;

/**
 * The rcode of a reply from its bytes: a zone transfer's from its first message (the reply is
 * framed: a length before each message; the type is compared first, so other queries skip the
 * WeakSet), else the header's. BADVERS (16) has only its low 4 bits there: see answeredRcode.
 */
export function replyRcode(q: ParsedQuery, reply: Buffer): number {
  if (isTransfer(q.qtype) && isFramed(reply)) return reply.length >= 6 ? reply[5]! & 0xf : RCODE.SERVFAIL;
  return reply.length >= 4 ? reply[3]! & 0xf : RCODE.SERVFAIL;
}

/** Whether the reply has TC (a zone transfer's framed reply: its first message's). */
function replyTruncated(q: ParsedQuery, reply: Buffer): boolean {
  const flags = isTransfer(q.qtype) && isFramed(reply) ? 4 : 2;
  return reply.length > flags && (reply[flags]! & 0x02) !== 0;
}

/**
 * replyRcode, and BADVERS for an EDNS version over 0, which answer() gives every such query, and
 * the extended rcode of a reply relayed from upstream (BADCOOKIE, 23: its upper bits ride in the
 * OPT record). For the query log only: it decodes the reply, which a sampled line can afford.
 */
export function answeredRcode(q: ParsedQuery, reply: Buffer): number {
  const rc = replyRcode(q, reply);
  if (rc === RCODE.NOERROR && q.edns !== undefined && q.edns.version > 0) return RCODE.BADVERS;
  if (reply.length < 12 || reply.readUInt16BE(10) === 0 || (isTransfer(q.qtype) && isFramed(reply))) return rc;
  try {
    const opt = dnsPacket.decode(reply).additionals?.find((a) => a.type === 'OPT') as { extendedRcode?: number } | undefined;
    return ((opt?.extendedRcode ?? 0) << 4) | rc;
  } catch {
    return rc;
  }
}

export interface QueryLogSink {
  record(q: ParsedQuery, transport: Transport, address: string | undefined, port: number | undefined, started: number, reply: Buffer | Promise<Buffer | undefined> | undefined, cached: boolean): void;
}

export class DnsHandler {
  readonly cache: ResponseCache;
  readonly malformed: MalformedQueries;
  /** Whether the last reply done() saw came from the cache (read by the query log right after a sync answer). */
  private lastHit = false;

  /** opts.absent, unless autopath is on (its NXDOMAIN depends on who asks). */
  private readonly absent: AbsentNames | undefined;
  /** The metrics' system of a cluster name's negative answer: 'reverse' only for a zone under arpa. */
  private readonly negativeSystem: System;

  constructor(private readonly opts: HandlerOptions) {
    this.cache = new ResponseCache(opts.zone, opts.cacheEntries, opts.cacheBytes);
    this.absent = opts.autopath ? undefined : opts.absent;
    this.negativeSystem = opts.absent && isArpa(opts.absent.zone) ? 'reverse' : 'auth';
    this.malformed = new MalformedQueries(opts.malformedRepliesPerSecond);
  }

  /** Never throws: a reply, a promise of one, or undefined when nothing should be sent. */
  handle(query: Buffer, transport: Transport, address?: string, port?: number): Buffer | Promise<Buffer | undefined> | undefined {
    const started = performance.now();
    let parsed;
    try {
      parsed = parseQuery(query);
    } catch {
      return undefined;
    }
    if (!parsed.ok) {
      if (!this.malformed.admit(started, parsed.id !== undefined)) return undefined;
      this.opts.log.debug({ reason: parsed.reason, transport }, 'malformed query');
      return errorReply(query, parsed.id!, parsed.opcode !== undefined && parsed.opcode !== 0 ? RCODE.NOTIMP : RCODE.FORMERR);
    }
    const q: ParsedQuery = parsed;
    try {
      const reply = this.answer(query, q, transport, started, address, port);
      // cache hits are always synchronous; a promise is a forward, never a hit
      if (this.opts.queryLog) this.opts.queryLog.record(q, transport, address, port, started, reply, Buffer.isBuffer(reply) && this.lastHit);
      return reply;
    } catch (e) {
      this.opts.log.error({ err: e, qname: q.name, qtype: q.qtype }, 'failed to answer a query');
      return encodeRcode(query, q, RCODE.SERVFAIL);
    }
  }

  /** `rcode`: given where the header cannot say it (BADVERS); else read from the reply. */
  private done(q: ParsedQuery, reply: Buffer, transport: Transport, started: number, system: System, cacheHit: boolean, rcode?: number): Buffer {
    this.lastHit = cacheHit;
    this.opts.observer?.observe(q.qtype, rcode ?? replyRcode(q, reply), transport, system, (performance.now() - started) / 1000, reply.length, cacheHit, replyTruncated(q, reply));
    return reply;
  }

  private answer(query: Buffer, q: ParsedQuery, transport: Transport, started: number, address: string | undefined, port: number | undefined): Buffer | Promise<Buffer | undefined> {
    if (q.opcode !== 0) return this.done(q, encodeRcode(query, q, RCODE.NOTIMP), transport, started, 'auth', false);
    if (q.edns && q.edns.version > 0) return this.done(q, encodeRcode(query, q, 0), transport, started, 'auth', false, RCODE.BADVERS);
    if (q.qtype === TYPE_ANY) return this.done(q, encodeRcode(query, q, RCODE.REFUSED), transport, started, 'auth', false);
    if (isTransfer(q.qtype)) {
      const t = this.opts.transfer;
      // before the first sync a transfer would hand out an empty zone: SERVFAIL, the secondary retries
      const reply = !t || q.qclass !== CLASS_IN ? encodeRcode(query, q, RCODE.REFUSED) : this.opts.isSynced() ? t.answer(query, q, transport, address) : encodeRcode(query, q, RCODE.SERVFAIL);
      // a transfer being built comes later (transfer/transfer.ts builds it between queries)
      if (!Buffer.isBuffer(reply)) return transferUnderway(reply.then((r) => this.done(q, r, transport, started, 'auth', false)));
      return this.done(q, reply, transport, started, 'auth', false);
    }

    // a stub domain inside the zone wins over our records, as the longest match does in dnsmasq
    const zoneStubs = this.opts.stubInZone;
    if (zoneStubs !== undefined && zoneStubs.any && zoneStubs.covers(q.lname)) return this.forward(query, q, transport, started, 'recursive', port);
    const limit = replyLimit(q, transport);
    const hit = this.cache.get(query, q, limit);
    if (hit) return this.done(q, rotateAnswers(hit, turnKey(q)), transport, started, questionIsArpa(query, q) ? 'reverse' : 'auth', true);

    if (q.qclass !== CLASS_IN) return this.done(q, encodeRcode(query, q, RCODE.REFUSED), transport, started, 'auth', false);
    // a meta-type asked as a question (after the cache: never in it), as BIND answers it: no
    // record of it exists to be asked for (RFC 6891 6.1.1, 8945 5.2; 1035's MAILA and MAILB)
    const meta = metaTypeRcode(q.qtype);
    if (meta !== undefined) return this.done(q, encodeRcode(query, q, meta), transport, started, 'auth', false);
    const absent = this.absent;
    if (absent && absent.isAbsent(query, q.nameOffset) && this.opts.isSynced()) {
      // a search-path expansion, most of a cluster's traffic: no string, no lookup, no Resolution
      const neg = encodeNegative(query, q, RCODE.NXDOMAIN, true, absent.soa, limit);
      if (neg) return this.done(q, neg, transport, started, this.negativeSystem, false);
    }
    const qtype = qtypeName(q.qtype);
    const r = this.opts.resolve(q.name, qtype, q.lname, answerBudget(limit));
    const system = r.cluster && isArpa(q.lname) ? 'reverse' : r.cluster ? 'auth' : 'recursive';
    if (r.cluster && !this.opts.isSynced()) {
      // before the first list of Services and EndpointSlices a negative answer would be a lie
      return this.done(q, encodeRcode(query, q, RCODE.SERVFAIL), transport, started, system, false);
    }
    if (r.action === 'forward') return this.forward(query, q, transport, started, system, port);
    if (r.chase) return this.chase(query, q, r, transport, limit, started);
    if (r.rcode === 'NXDOMAIN' && this.opts.autopath) {
      // the answer depends on who asks: never from or into the response cache
      const completing = this.opts.autopath.complete(query, q, qtype, address, transport);
      if (completing) return this.completed(completing, query, q, r, transport, limit, started, system);
    }

    const rcode = rcodeNumber(r.rcode);
    if (r.answers.length === 0 && r.authorities.length === 1 && r.authorities[0]!.type === 'SOA' && r.additionals.length === 0) {
      // NXDOMAIN / NODATA, built from a template. NXDOMAIN is never cached: unique names, the bulk
      // of a cluster's traffic, would only churn the cache. NODATA is, like the positive answers
      // it pairs with (the AAAA a pod's resolver asks with every A in an IPv4-only cluster): a hit
      // skips the name strings and the resolver. Its SOA's owner is written out (standalone),
      // since a hit writes the asker's spelling over the question a compressed owner points into.
      const nodata = rcode === RCODE.NOERROR;
      const neg = encodeNegative(query, q, rcode, r.aa, r.authorities[0]!, limit, nodata);
      if (neg) {
        if (nodata) {
          const cell = this.opts.zone.depCell?.(r.dep);
          this.cache.set(query, q, limit, neg, QUESTION_NAME_ONLY, r.dep, cell, cell ? cell.gen : this.opts.zone.depGeneration(r.dep), false);
        }
        return this.done(q, neg, transport, started, system, false);
      }
    }
    const cell = this.opts.zone.depCell?.(r.dep);
    const gen = cell ? cell.gen : this.opts.zone.depGeneration(r.dep);
    const enc = encodeReply(query, q, { rcode, aa: r.aa, answers: r.answers, authorities: r.authorities, additionals: r.additionals }, limit);
    this.cache.set(query, q, limit, enc.bytes, enc.nameOffsets, r.dep, cell, gen, enc.cut); // keeps a copy of its own
    return this.done(q, rotateAnswers(enc.bytes, turnKey(q)), transport, started, system, false);
  }

  private async completed(completing: Promise<Walked>, query: Buffer, q: ParsedQuery, r: Resolution, transport: Transport, limit: number, started: number, system: System): Promise<Buffer> {
    const walked = await completing.catch((e: unknown) => {
      this.opts.log.error({ err: e, qname: q.name }, 'autopath failed: plain answer');
      return undefined;
    });
    const a = walked?.answer;
    // a walk that asked upstream took the upstream's time: recursive, as a chase (the auth
    // latency alert blames kube-dns's own CPU)
    if (walked?.forwarded) system = 'recursive';
    const reply = a
      ? encodeReply(query, q, { rcode: a.rcode, aa: a.aa, answers: a.answers, authorities: a.authorities, additionals: [] }, limit).bytes
      : ((r.authorities[0] && encodeNegative(query, q, RCODE.NXDOMAIN, r.aa, r.authorities[0], limit)) ||
        encodeReply(query, q, { rcode: RCODE.NXDOMAIN, aa: r.aa, answers: [], authorities: r.authorities, additionals: [] }, limit).bytes);
    // an upstream said TC to the walk's question over UDP: so does the reply (the CNAME alone would end glibc's search)
    if (a?.truncated && transport === 'udp') reply[2]! |= Flag.TC >> 8;
    return this.done(q, a ? rotateAnswers(reply, turnKey(q)) : reply, transport, started, system, false);
  }

  private async forward(query: Buffer, q: ParsedQuery, transport: Transport, started: number, system: System, port: number | undefined): Promise<Buffer | undefined> {
    const reply = await this.opts.forwarder.forward(query, q.lname, transport, port).catch(() => undefined);
    if (reply === DROP) return undefined;
    const out = reply ? fitRelayed(relayedEdns(reply, q), query, q, replyLimit(q, transport)) : encodeRcode(query, q, RCODE.SERVFAIL);
    return this.done(q, out, transport, started, system, false);
  }

  /** ExternalName pointing outside the zone: the CNAME, then the target's records from upstream. */
  private async chase(query: Buffer, q: ParsedQuery, r: Resolution, transport: Transport, limit: number, started: number): Promise<Buffer> {
    const target = r.chase!;
    let extra: dnsPacket.Answer[] = [];
    let authorities: dnsPacket.Answer[] = [];
    let rcode = rcodeNumber(r.rcode);
    let truncated = false;
    try {
      const sub = buildQuery({ name: target, type: qtypeName(q.qtype) as dnsPacket.RecordType, ednsUdpSize: 1232 });
      const reply = await this.opts.forwarder.forward(sub, target.toLowerCase(), transport);
      if (reply && reply !== DROP) {
        const decoded = dnsPacket.decode(reply);
        extra = (decoded.answers ?? []).filter((a) => a.type !== 'OPT');
        if ((decoded as { rcode?: string }).rcode === 'NXDOMAIN') rcode = RCODE.NXDOMAIN;
        // a negative answer for the target carries its zone's SOA (RFC 2308 2.1, 2.2): without
        // it, dnsmasq and the clients' resolvers must not cache the negative answer (RFC 2308 5)
        if (rcode === RCODE.NXDOMAIN || !extra.some((a) => a.type === qtypeName(q.qtype))) {
          authorities = (decoded.authorities ?? []).filter((a) => a.type === 'SOA');
        }
        // the target's records did not fit the sub-query over UDP: the CNAME alone would look like
        // the whole answer (glibc does not follow it), so TC, and the client asks again over TCP,
        // where the target is asked over TCP too
        truncated = ((decoded.flags ?? 0) & dnsPacket.TRUNCATED_RESPONSE) !== 0;
      }
    } catch (e) {
      // the CNAME alone is still a correct answer: the client's resolver can follow it itself
      this.opts.log.debug({ target, err: (e as Error).message }, 'could not chase an ExternalName target upstream');
    }
    const enc = encodeReply(query, q, { rcode, aa: r.aa, answers: [...r.answers, ...extra], authorities, additionals: [] }, limit);
    if (truncated && transport === 'udp') enc.bytes[2]! |= Flag.TC >> 8;
    // timed as recursive: the time is the upstream's (an alert on the auth latency blames
    // kube-dns's own CPU, and a slow external target would page for it)
    return this.done(q, enc.bytes, transport, started, 'recursive', false);
  }
}
