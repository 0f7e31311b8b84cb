// Every record of a zone, for AXFR: the same records the resolver answers (built by asking it,
// so a transfer can never disagree with a query), SOA first and last. Pure.
//   cluster zone:  dns-version TXT, then per Service its A/AAAA, SRV, CNAME (ExternalName), its
//                  headless endpoints' names; pod names are left out (insecure mode answers any
//                  a-b-c-d name: not a finite set) as are PTRs (they live in the reverse zones).
//   external zone: per Service with an outside address its A/AAAA or CNAME and SRV names.
import type { Answer } from 'dns-packet';
import type { Zone } from '../records/zone.js';
import { soa } from '../resolve/answers.js';
import { resolve } from '../resolve/resolve.js';
import type { ResolveOptions } from '../resolve/types.js';
import { resolveExternal, type ExternalZone } from '../zones/external.js';

type Lookup = (name: string, qtype: string) => Answer[];

/** Records owned by `name` of the given types (what a query for each would answer, nothing chased). */
function collect(out: Answer[], lookup: Lookup, name: string, qtypes: readonly string[]): void {
  for (const t of qtypes) {
    for (const a of lookup(name, t)) if (a.type === t && a.name.toLowerCase() === name) out.push(a);
  }
}

function namedPortNames(ports: readonly { name: string; protocol: string }[], base: string): string[] {
  const out = new Set<string>();
  for (const p of ports) if (p.name) out.add(`_${p.name}._${p.protocol.toLowerCase()}.${base}`);
  return [...out];
}

const ADDR = ['A', 'AAAA'] as const;
const ADDR_SRV = ['A', 'AAAA', 'SRV'] as const;

export function clusterZoneRecords(zone: Zone, opts: ResolveOptions): Answer[] {
  const z = opts.zone;
  const lookup: Lookup = (name, qtype) => {
    const r = resolve(zone, name, qtype, opts, name);
    return r.action === 'answer' && r.rcode === 'NOERROR' ? r.answers : [];
  };
  const out: Answer[] = [soa(z, opts)];
  collect(out, lookup, z, ['NS']);
  collect(out, lookup, `dns-version.${z}`, ['TXT']);
  for (const e of zone.allServices()) {
    const fqdn = zone.fqdn(e, z);
    if (e.info.kind === 'ExternalName') {
      collect(out, lookup, fqdn, ['CNAME', ...ADDR]);
      continue;
    }
    collect(out, lookup, fqdn, ADDR_SRV);
    if (e.info.kind === 'ClusterIP') {
      for (const n of namedPortNames(e.info.ports, fqdn)) collect(out, lookup, n, ['SRV']);
      continue;
    }
    const view = zone.headless(e, z);
    for (const label of view.byLabel.keys()) collect(out, lookup, `${label}.${fqdn}`, ADDR);
    for (const n of namedPortNames(view.endpoints.flatMap((ep) => ep.ports), fqdn)) collect(out, lookup, n, ['SRV']);
  }
  out.push(soa(z, opts));
  return out;
}

export function externalZoneRecords(zone: Zone, ez: ExternalZone): Answer[] {
  const lookup: Lookup = (name, qtype) => {
    const r = resolveExternal(zone, name, name, qtype, ez);
    return r.rcode === 'NOERROR' ? r.answers : [];
  };
  const out: Answer[] = [soa(ez.name, ez.opts)];
  collect(out, lookup, ez.name, ['NS']);
  for (const e of zone.allServices()) {
    const ext = e.info.external;
    if (!ext) continue;
    const base = `${e.info.name}.${e.info.namespace}.${ez.name}`;
    collect(out, lookup, base, ext.ips.length ? ADDR_SRV : ['CNAME']);
    for (const n of namedPortNames(e.info.ports, base)) collect(out, lookup, n, ['SRV']);
  }
  out.push(soa(ez.name, ez.opts));
  return out;
}
