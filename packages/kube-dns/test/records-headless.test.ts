// A headless service's view (records/headless.ts) updated slice by slice, as the zone does on each
// EndpointSlice change once the view is built, is the view built from scratch from the same
// slices: same endpoints in the same order, names, maps and named protocols.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mergedHeadlessView, type HeadlessView } from '../src/records/headless.js';
import { dashedLabel } from '../src/records/names.js';
import type { EndpointSliceInfo, PortInfo, ServiceInfo } from '../src/records/types.js';
import { Zone } from '../src/records/zone.js';
import { ep, headless, port, slice } from './resolve-fixtures.js';

const ZN = 'cluster.local';
const FQDN = `h.default.svc.${ZN}`;
const V4 = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6'];
const V6 = ['fd00::1', 'fd00::2', 'fd00::3'];
const PORTS: PortInfo[][] = [[], [port('http', 80)], [port('http', 80), port('dns', 53, 'UDP')], [port('', 9000)]];

function canon(v: HeadlessView): unknown {
  const ports = (list: readonly PortInfo[]) => list.map((p) => `${p.name}/${p.port}/${p.protocol}`).sort();
  return {
    endpoints: v.endpoints.map((e) => [e.ip, e.v6, e.label, e.fqdn, ports(e.ports)]),
    byIp: [...v.byIp].map(([ip, e]) => [ip, e.label]).sort(),
    byLabel: [...v.byLabel].map(([label, eps]) => [label, eps.map((e) => e.ip).sort()]).sort(),
    namedProtocols: [...v.namedProtocols].sort(),
  };
}

/**
 * What a view must hold, written from the rules and not from the code under test: one endpoint per
 * counted address, in the order of its first listing (slices by name); named by its first
 * non-empty hostname, else its dashed address; its ports the union of its listing slices'.
 */
function reference(svc: ServiceInfo, slices: Iterable<EndpointSliceInfo>): unknown {
  const ordered = [...slices].sort((a, b) => (a.name < b.name ? -1 : 1));
  const entries = new Map<string, { hostname: string; ports: PortInfo[] }>();
  for (const s of ordered) {
    for (const e of s.endpoints) {
      if (!e.ready && !svc.publishNotReadyAddresses) continue;
      for (const ip of e.addresses) {
        const got = entries.get(ip);
        if (!got) entries.set(ip, { hostname: e.hostname, ports: [...s.ports] });
        else {
          got.hostname ||= e.hostname;
          for (const p of s.ports) if (!got.ports.some((q) => q.name === p.name && q.port === p.port && q.protocol === p.protocol)) got.ports.push(p);
        }
      }
    }
  }
  const endpoints = [...entries].map(([ip, { hostname, ports }]) => ({ ip, v6: ip.includes(':'), label: hostname || dashedLabel(ip), ports }));
  const labels = new Map<string, string[]>();
  for (const e of endpoints) labels.set(e.label, [...(labels.get(e.label) ?? []), e.ip]);
  return {
    endpoints: endpoints.map((e) => [e.ip, e.v6, e.label, `${e.label}.${FQDN}`, e.ports.map((p) => `${p.name}/${p.port}/${p.protocol}`).sort()]),
    byIp: endpoints.map((e) => [e.ip, e.label]).sort(),
    byLabel: [...labels].map(([label, ips]) => [label, ips.sort()]).sort(),
    namedProtocols: [...new Set(endpoints.flatMap((e) => e.ports.filter((p) => p.name).map((p) => p.protocol.toLowerCase())))].sort(),
  };
}

const endpointArb = (pool: string[]) =>
  fc.record({ ip: fc.constantFrom(...pool), hostname: fc.constantFrom('', '', 'pet-0', 'pet-1'), ready: fc.boolean() }).map((e) => ep(e.ip, e.hostname, e.ready));
const sliceArb = fc.record({
  name: fc.constantFrom('s-a', 's-b', 's-c', 's-d'),
  v6: fc.boolean(),
  ports: fc.constantFrom(...PORTS),
  endpoints: fc.integer({ min: 0, max: 5 }),
}).chain((s) => fc.array(endpointArb(s.v6 ? V6 : V4), { minLength: s.endpoints, maxLength: s.endpoints }).map((eps) => slice('default', s.name, 'h', eps, s.ports)));
const opArb = fc.oneof(
  { weight: 6, arbitrary: sliceArb.map((s) => ({ op: 'set' as const, s })) },
  { weight: 2, arbitrary: fc.constantFrom('s-a', 's-b', 's-c', 's-d').map((name) => ({ op: 'delete' as const, name })) },
  { weight: 1, arbitrary: fc.boolean().map((pnr) => ({ op: 'service' as const, pnr })) },
  { weight: 3, arbitrary: fc.constant({ op: 'ask' as const }) },
);

test('a view updated slice by slice is the view built from scratch, whatever the changes (addresses listed twice, not-ready ones, hostnames shared, slices deleted)', () => {
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) => {
      const zone = new Zone();
      let svc = headless('default', 'h');
      zone.setService(svc);
      const slices = new Map<string, EndpointSliceInfo>();
      for (const o of ops) {
        if (o.op === 'set') {
          zone.setSlice(o.s);
          slices.set(o.s.name, o.s);
        } else if (o.op === 'delete') {
          zone.deleteSlice('default', o.name);
          slices.delete(o.name);
        } else if (o.op === 'service') {
          svc = headless('default', 'h', o.pnr);
          zone.setService(svc);
        }
        // the zone's view (updated when it was built before the change, else built now) against one made from scratch
        const got = zone.headless(zone.getService('default', 'h')!, ZN);
        if (o.op === 'ask' || ops.indexOf(o) % 2 === 0) {
          const want = reference(svc, slices.values());
          assert.deepEqual(canon(got), want);
          assert.deepEqual(canon(mergedHeadlessView(svc, [...slices.values()].sort((a, b) => (a.name < b.name ? -1 : 1)), FQDN)), want);
        }
      }
    }),
    { numRuns: 400 },
  );
});

test('a change of one slice of a large headless service updates the view: the other slices\' endpoints are the same objects', () => {
  const zone = new Zone();
  zone.setService(headless('db', 'big'));
  for (let i = 0; i < 50; i++) zone.setSlice(slice('db', `big-${i}`, 'big', Array.from({ length: 100 }, (_, k) => ep(`10.1.${i}.${k}`, k % 2 ? `pg-${i}-${k}` : '')), [port('pg', 5432)]));
  const e = () => zone.getService('db', 'big')!;
  const before = zone.headless(e(), ZN);
  zone.setSlice(slice('db', 'big-7', 'big', [ep('10.9.9.9', 'new')], [port('pg', 5432)]));
  const after = zone.headless(e(), ZN);
  assert.equal(after.endpoints.length, 49 * 100 + 1);
  assert.ok(after.byLabel.has('new') && !after.byIp.has('10.1.7.1') && after.byIp.has('10.1.8.1'));
  assert.equal(after.byIp.get('10.1.8.1'), before.endpoints.find((x) => x.ip === '10.1.8.1'), 'kept, not made again');
  const place = Array.from({ length: 50 }, (_, i) => `big-${i}`).sort().indexOf('big-7');
  assert.equal(after.endpoints[place * 100]!.ip, '10.9.9.9', 'in its slice\'s place (slices in name order)');
});

test('at the initial sync the views of large headless services are built, smaller ones and other kinds wait for their first query', () => {
  const zone = new Zone();
  const fill = (name: string, slices: number, per: number) => {
    for (let i = 0; i < slices; i++) zone.setSlice(slice('db', `${name}-${i}`, name, Array.from({ length: per }, (_, k) => ep(`10.${slices}.${i}.${k}`, k % 3 ? '' : `${name}-${i}-${k}`)), [port('pg', 5432)]));
  };
  zone.setService(headless('db', 'big'));
  fill('big', 6, 100);
  zone.setService(headless('db', 'small'));
  fill('small', 1, 50);
  zone.setService({ ...headless('db', 'lb'), kind: 'ClusterIP', clusterIPs: ['10.96.0.9'] });
  fill('lb', 7, 100);
  assert.equal(zone.buildLargeHeadlessViews(ZN, 500), 1, 'the 600-endpoint headless service only');
  assert.equal(zone.buildLargeHeadlessViews(ZN, 500), 0, 'kept: built once');
  const big = zone.headless(zone.getService('db', 'big')!, ZN);
  assert.equal(big.endpoints.length, 600);
  // a slice change updates the view built at the sync: nothing left to build
  zone.setSlice(slice('db', 'big-2', 'big', [ep('10.9.9.9', 'new')], [port('pg', 5432)]));
  assert.equal(zone.buildLargeHeadlessViews(ZN, 500), 0);
  assert.equal(zone.headless(zone.getService('db', 'big')!, ZN).endpoints.length, 501);
  assert.equal(zone.buildLargeHeadlessViews(ZN, 10), 1, 'the small one was left for its first query');
});
