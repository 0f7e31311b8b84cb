// Every record of a zone, for AXFR: the same records the resolver answers (built by asking it,
// so a transfer can never disagree with a query; a headless Service's by the resolver's own
// headlessRecordsInPieces, a few hundred at a time), SOA first and last. Pure. Given a Service at a
// time (a generator of each one's records), so that the transfer can be built a slice at a time
// between queries (transfer.ts), each Service's records from one look at it.
//   cluster zone:  dns-version TXT, then per Service its A/AAAA, SRV, CNAME (ExternalName), its
//                  headless endpoints' names; pod names are left out (insecure mode answers any
//                  a-b-c-d name: not a finite set) as are PTRs (they live in the reverse zones).
//   external zone: per Service with an outside address its A/AAAA or CNAME and SRV names.
import type { Answer } from 'dns-packet';
import { namedPortPrefixes } from '../records/names.js';
import type { ServiceEntry, Zone } from '../records/zone.js';
import { soa } from '../resolve/answers.js';
import { resolve } from '../resolve/resolve.js';
import { headlessRecordsInPieces } from '../resolve/services.js';
import type { ResolveOptions } from '../resolve/types.js';
import { resolveExternal, type ExternalZone } from '../zones/external.js';

type Lookup = (name: string, qtype: string) => Answer[];

/** Records owned by `name` of the given types (what a query for each would answer, nothing chased). */
function collect(out: Answer[], lookup: Lookup, name: string, qtypes: readonly string[]): Answer[] {
  for (const t of qtypes) {
    for (const a of lookup(name, t)) if (a.type === t && a.name.toLowerCase() === name) out.push(a);
  }
  return out;
}

const ADDR = ['A', 'AAAA'] as const;
const ADDR_SRV = ['A', 'AAAA', 'SRV'] as const;
/** Records per piece of a large headless Service. */
const PIECE = 256;

/**
 * The Services as a build begins, each looked up again when its turn comes (the build pauses
 * between Services): one deleted meanwhile is left out, one re-created is given once, as it is
 * then, and one added waits for the next serial, which its change moves. A live walk of the
 * zone's maps would visit a re-created Service again at their end: twice in one transfer, as an
 * A and a CNAME, which a secondary rejects.
 */
function* servicesNow(zone: Zone): Generator<ServiceEntry> {
  for (const was of [...zone.allServices()]) {
    const e = zone.getService(was.info.namespace, was.info.name);
    if (e) yield e;
  }
}

/**
 * The SOA, then the apex records, then each Service's records, then the same SOA: one array each
 * (a large headless Service: several). Names a stub domain inside the zone takes (forwarded, not
 * answered from the records) are left out, as a query for them does not get our records.
 */
export function* clusterZoneRecordsByService(zone: Zone, opts: ResolveOptions): Generator<Answer[]> {
  yield* withoutForwarded(ownRecordsByService(zone, opts), opts.forwardedInZone);
}

/** The pieces less the records of names a stub domain inside the zone takes (both SOAs kept). */
function* withoutForwarded(pieces: Generator<Answer[]>, forwarded: ((lname: string) => boolean) | undefined): Generator<Answer[]> {
  if (!forwarded) return yield* pieces;
  for (const piece of pieces) {
    const kept = piece.filter((a) => a.type === 'SOA' || !forwarded(a.name.toLowerCase()));
    if (kept.length) yield kept;
  }
}

function* ownRecordsByService(zone: Zone, opts: ResolveOptions): Generator<Answer[]> {
  const z = opts.zone;
  const lookup: Lookup = (name, qtype) => {
    const r = resolve(zone, name, qtype, opts, name);
    return r.action === 'answer' && r.rcode === 'NOERROR' ? r.answers : [];
  };
  const first = soa(z, opts); // the serial as the transfer began, at both ends (RFC 5936 2.2)
  const apex = collect([first], lookup, z, ['NS']);
  yield collect(apex, lookup, `dns-version.${z}`, ['TXT']);
  for (const e of servicesNow(zone)) {
    const fqdn = zone.fqdn(e, z);
    if (e.info.kind === 'ExternalName') {
      yield collect([], lookup, fqdn, ['CNAME', ...ADDR]);
    } else if (e.info.kind === 'ClusterIP') {
      const out = collect([], lookup, fqdn, ADDR_SRV);
      for (const n of namedPortPrefixes(e.info.ports)) collect(out, lookup, `${n}.${fqdn}`, ['SRV']);
      yield out;
    } else {
      // a headless Service of thousands of endpoints comes in pieces (one answer of its own name
      // would be one large step of the build); nothing when it has no counted endpoint (no name)
      yield* headlessRecordsInPieces(zone.headless(e, z), fqdn, opts.ttl, PIECE);
    }
  }
  yield [first];
}

export function clusterZoneRecords(zone: Zone, opts: ResolveOptions): Answer[] {
  return [...clusterZoneRecordsByService(zone, opts)].flat();
}

/** As clusterZoneRecordsByService, for an external zone (the Services with an outside address). */
export function* externalZoneRecordsByService(zone: Zone, ez: ExternalZone): Generator<Answer[]> {
  yield* withoutForwarded(ownExternalRecordsByService(zone, ez), ez.opts.forwardedInZone);
}

function* ownExternalRecordsByService(zone: Zone, ez: ExternalZone): Generator<Answer[]> {
  const lookup: Lookup = (name, qtype) => {
    const r = resolveExternal(zone, name, name, qtype, ez);
    return r.rcode === 'NOERROR' ? r.answers : [];
  };
  const first = soa(ez.name, ez.opts);
  yield collect([first], lookup, ez.name, ['NS']);
  for (const e of servicesNow(zone)) {
    const ext = e.info.external;
    if (!ext) continue;
    const base = `${e.info.name}.${e.info.namespace}.${ez.name}`;
    const out = collect([], lookup, base, ext.ips.length ? ADDR_SRV : ['CNAME']);
    for (const n of namedPortPrefixes(e.info.ports)) collect(out, lookup, `${n}.${base}`, ['SRV']);
    yield out;
  }
  yield [first];
}

export function externalZoneRecords(zone: Zone, ez: ExternalZone): Answer[] {
  return [...externalZoneRecordsByService(zone, ez)].flat();
}
