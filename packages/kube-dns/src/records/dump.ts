// The /cache listing: every record the zone serves for each service, as JSON. The records are not
// derived here: each one is the answer resolve() gives to a question about a name the service
// owns (A/AAAA/CNAME/SRV at the service name and its named ports, A/AAAA at each SRV target, PTR
// at each address; a headless service's from the resolver's own headlessRecordsInPieces, the same
// rules a few hundred records at a time), so /cache and DNS cannot disagree. Synthetic names (insecure pod names,
// SOA/NS, dns-version) are not listed; pods (--pods=verified) are listed as the zone holds them.
//
// The JSON is produced piece by piece by a generator so that the HTTP layer can interleave it
// with DNS queries: between two pieces the work done is bounded (a service's questions, at most
// TARGETS_PER_BATCH endpoints' of a headless one, or sorting at most SORT_SLICE names), however
// large the zone. A piece may be '' (work done,
// nothing to write): a point where the caller may pause.
import type { Answer } from 'dns-packet';
import { resolve } from '../resolve/resolve.js';
import { headlessRecordsInPieces } from '../resolve/services.js';
import { namesOf } from './headless.js';
import type { ResolveOptions } from '../resolve/types.js';
import { ipToReverseName, namedPortPrefixes } from './names.js';
import type { ServiceKind } from './types.js';
import type { ServiceEntry, Zone } from './zone.js';

export interface DumpRecord {
  name: string;
  type: 'A' | 'AAAA' | 'SRV' | 'CNAME' | 'PTR';
  data: string;
}

export interface DumpService {
  namespace: string;
  name: string;
  kind: ServiceKind;
  records: DumpRecord[];
}

/** The parsed form of the JSON that dumpJson writes. */
export interface ZoneDump {
  zone: string;
  /** The zone's generation when the listing started (services changed meanwhile show their newer state). */
  generation: number;
  services: DumpService[];
  pods: { namespace: string; name: string; ips: string[] }[];
}

/** Answers resolve() gives at `name` for `qtype`, of that type and owned by that name. */
function ask(zone: Zone, name: string, qtype: DumpRecord['type'], opts: ResolveOptions): Answer[] {
  const r = resolve(zone, name, qtype, opts);
  if (r.action !== 'answer' || r.rcode !== 'NOERROR') return [];
  // An in-zone CNAME chain also carries the target's records: those belong to the target.
  return r.answers.filter((a) => a.type === qtype && a.name === name);
}

function toRecord(a: Answer): DumpRecord {
  switch (a.type) {
    case 'SRV':
      return { name: a.name, type: 'SRV', data: `${a.data.priority} ${a.data.weight} ${a.data.port} ${a.data.target}.` };
    case 'CNAME':
    case 'PTR':
      return { name: a.name, type: a.type, data: `${a.data}.` };
    default:
      return { name: a.name, type: a.type as 'A' | 'AAAA', data: String((a as { data: unknown }).data) };
  }
}

/** SRV targets or addresses asked between two pause points of one service's listing. */
const TARGETS_PER_BATCH = 256;

/**
 * Every record of one service, as the resolver answers for it, in batches: a headless service
 * may have thousands of endpoints (20,000 held the event loop 0.3-0.5 s in one piece), so its
 * records come from the resolver's headlessRecordsInPieces and its PTR questions are asked
 * TARGETS_PER_BATCH at a time, a pause point between batches.
 */
export function* serviceRecordBatches(zone: Zone, e: ServiceEntry, opts: ResolveOptions): Generator<DumpRecord[]> {
  const fqdn = zone.fqdn(e, opts.zone);
  if (e.info.kind === 'Headless') {
    yield* headlessRecordBatches(zone, e, fqdn, opts);
    return;
  }
  let answers: Answer[] = [];
  const ips = new Set<string>();
  const take = (list: Answer[]): void => {
    for (const a of list) {
      answers.push(a);
      if (a.type === 'A' || a.type === 'AAAA') ips.add((a as { data: string }).data);
    }
  };
  const addresses = (name: string): void => {
    take(ask(zone, name, 'A', opts));
    take(ask(zone, name, 'AAAA', opts));
  };
  const batch = (): DumpRecord[] => {
    const out = answers.map(toRecord);
    answers = [];
    return out;
  };
  addresses(fqdn);
  if (e.info.kind === 'ExternalName') {
    take(ask(zone, fqdn, 'CNAME', opts));
    yield batch();
    return;
  }
  take(ask(zone, fqdn, 'SRV', opts));
  for (const prefix of namedPortPrefixes(e.info.ports)) take(ask(zone, `${prefix}.${fqdn}`, 'SRV', opts));
  // the PTRs of its cluster IPs that point to it (an IP may have belonged to another service)
  for (const ip of ips) for (const p of ask(zone, ipToReverseName(ip), 'PTR', opts)) if ((p as { data: string }).data === fqdn) answers.push(p);
  yield batch();
}

/**
 * A headless service: its names' records a few hundred at a time (the resolver's own
 * headlessRecordsInPieces), then the PTR of each endpoint address that points into it (an IP
 * shared with another service lists only its own), TARGETS_PER_BATCH addresses at a time.
 */
function* headlessRecordBatches(zone: Zone, e: ServiceEntry, fqdn: string, opts: ResolveOptions): Generator<DumpRecord[]> {
  const view = zone.headless(e, opts.zone);
  for (const piece of headlessRecordsInPieces(view, fqdn, opts.ttl, TARGETS_PER_BATCH)) yield piece.map(toRecord);
  let out: DumpRecord[] = [];
  for (const ep of view.endpoints) {
    for (const p of ask(zone, ipToReverseName(ep.ip), 'PTR', opts)) if (namesOf(ep).some((n) => n.fqdn === (p as { data: string }).data)) out.push(toRecord(p));
    if (out.length < TARGETS_PER_BATCH) continue;
    yield out;
    out = [];
  }
  yield out;
}

/** Every record of one service, as the resolver answers for it. */
export function serviceRecords(zone: Zone, e: ServiceEntry, opts: ResolveOptions): DumpRecord[] {
  return [...serviceRecordBatches(zone, e, opts)].flat();
}

/** Names sorted lazily: slices of SORT_SLICE sorted one per step, then merged as they are taken. */
const SORT_SLICE = 2048;

function* sortedNames(names: string[]): Generator<string | undefined> {
  const runs: string[][] = [];
  for (let i = 0; i < names.length; i += SORT_SLICE) {
    runs.push(names.slice(i, i + SORT_SLICE).sort());
    yield undefined; // a pause point
  }
  // k-way merge with a binary heap of run indexes, keyed by each run's current head.
  const pos = runs.map(() => 0);
  const head = (r: number): string => runs[r]![pos[r]!]!;
  const heap = runs.map((_, i) => i);
  const less = (a: number, b: number): boolean => head(heap[a]!) < head(heap[b]!);
  const down = (i: number): void => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && less(l, m)) m = l;
      if (r < heap.length && less(r, m)) m = r;
      if (m === i) return;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  while (heap.length > 0) {
    const r = heap[0]!;
    yield head(r);
    if (++pos[r]! === runs[r]!.length) {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    down(0);
  }
}

/**
 * The /cache JSON of the zone, in pieces: namespaces and services in name order, one service per
 * line. The zone may change between pieces: each service is listed as it is when its turn comes,
 * a service deleted meanwhile is left out and one added meanwhile may be missing.
 */
export function* dumpJson(zone: Zone, opts: ResolveOptions): Generator<string> {
  yield `{"zone":${JSON.stringify(opts.zone)},"generation":${zone.generation},"services":[`;
  let first = true;
  for (const ns of sortedNames([...zone.namespaces()])) {
    if (ns === undefined) {
      yield '';
      continue;
    }
    for (const name of sortedNames([...zone.servicesIn(ns)].map((e) => e.info.name))) {
      const e = name === undefined ? undefined : zone.getService(ns, name);
      if (!e) {
        yield '';
        continue;
      }
      // JSON.stringify of the DumpService, written a batch of records at a time
      const head: Omit<DumpService, 'records'> = { namespace: ns, name: e.info.name, kind: e.info.kind };
      let piece = `${first ? '' : ','}\n${JSON.stringify(head).slice(0, -1)},"records":[`;
      let firstRecord = true;
      for (const records of serviceRecordBatches(zone, e, opts)) {
        for (let k = 0; k < records.length; k++) {
          piece += `${firstRecord ? '' : ','}${JSON.stringify(records[k])}`;
          firstRecord = false;
          if ((k + 1) % TARGETS_PER_BATCH === 0) {
            yield piece;
            piece = '';
          }
        }
        yield piece;
        piece = '';
      }
      yield `${piece}]}`;
      first = false;
    }
  }
  yield '\n],"pods":[';
  first = true;
  let n = 0;
  for (const p of zone.allPods()) {
    yield `${first ? '' : ','}\n${JSON.stringify(p)}`;
    first = false;
    if (++n % SORT_SLICE === 0) yield '';
  }
  yield '\n]}\n';
}
