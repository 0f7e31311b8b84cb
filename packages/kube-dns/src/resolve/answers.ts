// Record and Resolution constructors. Names are dns-packet style: no trailing dot.
import type { Answer } from 'dns-packet';
import type { Resolution, ResolveOptions } from './types.js';

export const DNS_SCHEMA_VERSION = '1.1.0';
export const SRV_PRIORITY = 10;

export function address(name: string, ip: string, v6: boolean, ttl: number): Answer {
  return { name, type: v6 ? 'AAAA' : 'A', ttl, class: 'IN', data: ip };
}

/** Weight is set by finishSrv once the number of SRV records in the answer is known. */
export function srv(name: string, port: number, target: string, ttl: number, weight = 0): Answer {
  return { name, type: 'SRV', ttl, class: 'IN', data: { priority: SRV_PRIORITY, weight, port, target } };
}

export function ptr(name: string, target: string, ttl: number): Answer {
  return { name, type: 'PTR', ttl, class: 'IN', data: target };
}

export function cname(name: string, target: string, ttl: number): Answer {
  return { name, type: 'CNAME', ttl, class: 'IN', data: target };
}

export function soa(name: string, opts: ResolveOptions): Answer {
  const z = opts.zone;
  return {
    name,
    type: 'SOA',
    ttl: opts.ttl,
    class: 'IN',
    data: {
      mname: opts.mname ?? `ns.dns.${z}`,
      rname: `hostmaster.${z}`,
      serial: opts.serial,
      refresh: 28800,
      retry: 7200,
      expire: 604800,
      minimum: opts.ttl,
    },
  };
}

/**
 * The zone's SOA for negative answers: one object per ResolveOptions and serial (the serial moves
 * only with zone transfer on), so NXDOMAIN and NODATA allocate no record, and the encoder can
 * keep its wire form (encode.ts). Shared: nobody mutates it.
 */
const zoneSoas = new WeakMap<ResolveOptions, { serial: number; list: Answer[] }>();
export function zoneSoa(opts: ResolveOptions): Answer {
  return negativeAuthority(opts)[0]!;
}

/**
 * The authority section of every negative answer, `[zoneSoa]`, and the empty sections: shared and
 * frozen, so that NXDOMAIN and NODATA allocate one object (the Resolution) rather than four. With
 * zone transfer on, `opts.serial` is a getter that grows with every change: a new record then, or
 * a negative answer would show a secondary an older serial than the SOA query does.
 */
function negativeAuthority(opts: ResolveOptions): Answer[] {
  let a = zoneSoas.get(opts);
  if (!a || (opts.dynamicSerial && a.serial !== opts.serial)) {
    zoneSoas.set(opts, (a = { serial: opts.serial, list: Object.freeze([soa(opts.zone, opts)]) as Answer[] }));
  }
  return a.list;
}
const NONE = Object.freeze([]) as unknown as Answer[];

function identity(a: Answer): string {
  switch (a.type) {
    case 'SRV':
      return `SRV ${a.name.toLowerCase()} ${a.data.port} ${a.data.target}`;
    case 'A':
    case 'AAAA':
    case 'PTR':
    case 'CNAME':
      return `${a.type} ${a.name.toLowerCase()} ${a.data}`;
    default:
      return `${a.type} ${a.name.toLowerCase()} ${'data' in a ? JSON.stringify(a.data) : ''}`;
  }
}

/** Drops repeated records (same owner, type and data), keeping the first. */
export function dedupe(list: Answer[]): Answer[] {
  if (list.length < 2) return list;
  const seen = new Set<string>();
  return list.filter((a) => {
    const k = identity(a);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** SRV weight = floor(100 / n), n = SRV records in the answer (after dedupe). */
export function finishSrv(list: Answer[]): Answer[] {
  let n = 0;
  for (const a of list) if (a.type === 'SRV') n++;
  if (n === 0) return list;
  const weight = Math.floor(100 / n);
  for (const a of list) if (a.type === 'SRV') a.data.weight = weight;
  return list;
}

/** An authoritative answer; an empty one is NODATA (SOA in authority). */
export function positive(opts: ResolveOptions, answers: Answer[], additionals: Answer[], dep: string): Resolution {
  if (answers.length === 0) return nodata(opts, dep);
  return {
    action: 'answer',
    rcode: 'NOERROR',
    aa: true,
    answers: finishSrv(dedupe(answers)),
    authorities: NONE,
    additionals: dedupe(additionals),
    cluster: true,
    dep,
  };
}

/** With zone transfer on, a negative answer's SOA carries a serial that moves with any change: kept in the response cache under '*'. */
const negativeDep = (opts: ResolveOptions, dep: string): string => (opts.dynamicSerial ? '*' : dep);

export function nodata(opts: ResolveOptions, dep: string): Resolution {
  return { action: 'answer', rcode: 'NOERROR', aa: true, answers: NONE, authorities: negativeAuthority(opts), additionals: NONE, cluster: true, dep: negativeDep(opts, dep) };
}

export function nxdomain(opts: ResolveOptions, dep: string): Resolution {
  return { action: 'answer', rcode: 'NXDOMAIN', aa: true, answers: NONE, authorities: negativeAuthority(opts), additionals: NONE, cluster: true, dep: negativeDep(opts, dep) };
}

export function forward(cluster: boolean, dep: string): Resolution {
  return { action: 'forward', rcode: 'NOERROR', aa: false, answers: [], authorities: [], additionals: [], cluster, dep };
}
