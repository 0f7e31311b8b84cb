// A headless service's view (records/headless.ts) updated slice by slice, as the zone does on each
// EndpointSlice change once the view is built, is the view built from scratch from the same
// slices: same endpoints in the same order, names, maps and named protocols.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { labelled, mergedHeadlessView, type HeadlessView } from '../src/records/headless.js';
import { dashedLabel } from '../src/records/names.js';
import type { EndpointSliceInfo, PortInfo, ServiceInfo } from '../src/records/types.js';
import { Zone } from '../src/records/zone.js';
import { ep, headless, port, slice } from './resolve-fixtures.js';

const ZN = 'cluster.local';
const FQDN = `h.default.svc.${ZN}`;
const V4 = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5', '10.0.0.6'];
const V6 = ['fd00::1', 'fd00::2', 'fd00::3'];
const PORTS: PortInfo[][] = [[], [port('http', 80)], [port('http', 80), port('dns', 53, 'UDP')], [port('', 9000)]];

const HOSTNAMES = ['pet-0', 'pet-1', '10-0-0-2'];

/** Every label a question may ask for: the endpoints', every hostname of the pool and each address of the pools, dashed. */
function labelsAsked(v: { endpoints: readonly { label: string }[] }): string[] {
  return [...new Set([...v.endpoints.map((e) => e.label), ...HOSTNAMES, ...[...V4, ...V6].map(dashedLabel)])].sort();
}

function canon(v: HeadlessView): unknown {
  const ports = (list: readonly PortInfo[]) => list.map((p) => `${p.name}/${p.port}/${p.protocol}`).sort();
  // byLabel leaves out the endpoints labelled with their own address (byIp finds them), but for an
  // address's other names (byIp holds its first)
  for (const eps of v.byLabel.values()) for (const e of eps) if (v.byIp.get(e.ip) === e) assert.notEqual(e.label, dashedLabel(e.ip), 'no address-labelled endpoint in byLabel');
  return {
    endpoints: v.endpoints.map((e) => [e.ip, e.v6, e.label, e.fqdn, ports(e.ports), (e.also ?? []).map((o) => [o.label, o.fqdn, ports(o.ports)])]),
    byIp: [...v.byIp].map(([ip, e]) => [ip, e.label]).sort(),
    byLabel: labelsAsked(v).map((label) => [label, (labelled(v, label) ?? []).map((e) => e.ip).sort()]),
    namedProtocols: [...v.namedProtocols].sort(),
  };
}

/**
 * What a view must hold, written from the rules and not from the code under test: one endpoint per
 * counted address, in the order of its first listing (slices by name); named by its first
 * non-empty hostname, else its dashed address; its ports the union of its listing slices'; its
 * listings' other hostnames are other names of it (spec 2.4.1: one per endpoint with a hostname).
 */
function reference(svc: ServiceInfo, slices: Iterable<EndpointSliceInfo>): unknown {
  const ordered = [...slices].sort((a, b) => (a.name < b.name ? -1 : 1));
  const entries = new Map<string, { hostnames: string[]; ports: PortInfo[] }>();
  for (const s of ordered) {
    for (const e of s.endpoints) {
      if (!e.ready && !svc.publishNotReadyAddresses) continue;
      for (const ip of e.addresses) {
        const got = entries.get(ip);
        if (!got) entries.set(ip, { hostnames: e.hostname ? [e.hostname] : [], ports: [...s.ports] });
        else {
          if (e.hostname && !got.hostnames.includes(e.hostname)) got.hostnames.push(e.hostname);
          for (const p of s.ports) if (!got.ports.some((q) => q.name === p.name && q.port === p.port && q.protocol === p.protocol)) got.ports.push(p);
        }
      }
    }
  }
  const endpoints = [...entries].map(([ip, { hostnames, ports }]) => ({ ip, v6: ip.includes(':'), label: hostnames[0] || dashedLabel(ip), also: hostnames.slice(1), ports }));
  const labels = new Map<string, string[]>();
  for (const e of endpoints) for (const l of [e.label, ...e.also]) labels.set(l, [...(labels.get(l) ?? []), e.ip]);
  const portList = (e: { ports: PortInfo[] }) => e.ports.map((p) => `${p.name}/${p.port}/${p.protocol}`).sort();
  return {
    endpoints: endpoints.map((e) => [e.ip, e.v6, e.label, `${e.label}.${FQDN}`, portList(e), e.also.map((l) => [l, `${l}.${FQDN}`, portList(e)])]),
    byIp: endpoints.map((e) => [e.ip, e.label]).sort(),
    byLabel: labelsAsked({ endpoints }).map((label) => [label, (labels.get(label) ?? []).sort()]),
    namedProtocols: [...new Set(endpoints.flatMap((e) => e.ports.filter((p) => p.name).map((p) => p.protocol.toLowerCase())))].sort(),
  };
}

const endpointArb = (pool: string[]) =>
  fc.record({ ip: fc.constantFrom(...pool), hostname: fc.constantFrom('', '', ...HOSTNAMES), ready: fc.boolean() }).map((e) => ep(e.ip, e.hostname, e.ready));
const sliceArb = fc.record({
  name: fc.constantFrom('s-a', 's-b', 's-c', 's-d'),
  v6: fc.boolean(),
  ports: fc.constantFrom(...PORTS),
  endpoints: fc.integer({ min: 0, max: 5 }),
}).chain((s) => fc.array(endpointArb(s.v6 ? V6 : V4), { minLength: s.endpoints, maxLength: s.endpoints }).map((eps) => slice('default', s.name, 'h', eps, s.ports)));
const opArb = fc.oneof(
  { weight: 6, arbitrary: sliceArb.map((s) => ({ op: 'set' as const, s })) },
  { weight: 2, arbitrary: fc.constantFrom('s-a', 's-b', 's-c', 's-d').map((name) => ({ op: 'delete' as const, name })) },
  // the Service object changes: publishNotReadyAddresses (what counts), its own ports (nothing the view holds)
  { weight: 1, arbitrary: fc.record({ pnr: fc.boolean(), ports: fc.constantFrom(...PORTS) }).map((o) => ({ op: 'service' as const, ...o })) },
  { weight: 3, arbitrary: fc.constant({ op: 'ask' as const }) },
);

/** The PTR targets of every address the slices list, from the rules: a counted address names each of its endpoints' names, once. */
function referencePtrs(svc: ServiceInfo, slices: Iterable<EndpointSliceInfo>): string[][] {
  const view = reference(svc, slices) as { endpoints: [string, boolean, string, string, string[], [string, string][]][] };
  const named = new Map(view.endpoints.map(([ip, , , fqdn, , also]) => [ip, [fqdn, ...also.map(([, f]) => f)]]));
  return [...V4, ...V6].map((ip) => named.get(ip) ?? []);
}

test('a view updated slice by slice is the view built from scratch, whatever the changes (addresses listed twice, not-ready ones, hostnames shared, slices deleted, the Service changed)', () => {
  fc.assert(
    // keep: views kept built from that many listed addresses on (keepLargeHeadlessViews), as after the sync
    fc.property(fc.array(opArb, { minLength: 1, maxLength: 40 }), fc.option(fc.integer({ min: 0, max: 8 })), (ops, keep) => {
      const zone = new Zone();
      if (keep !== null) zone.keepLargeHeadlessViews(ZN, keep);
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
          svc = { ...headless('default', 'h', o.pnr), ports: o.ports };
          zone.setService(svc);
        }
        assert.deepEqual([...V4, ...V6].map((ip) => zone.ptrTargets(ip, ZN)), referencePtrs(svc, slices.values()), "PTR: one target per name of a counted address");
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
  const built = (name: string) => zone.getService('db', name)!.memo?.headless !== undefined;
  zone.setService(headless('db', 'big'));
  fill('big', 6, 100);
  zone.setService(headless('db', 'small'));
  fill('small', 1, 50);
  zone.setService({ ...headless('db', 'lb'), kind: 'ClusterIP', clusterIPs: ['10.96.0.9'] });
  fill('lb', 7, 100);
  assert.ok(!built('big'), 'during the initial list nothing is built');
  assert.equal(zone.keepLargeHeadlessViews(ZN, 500), 1, 'the 600-endpoint headless service only');
  assert.ok(built('big') && !built('small'));
  assert.equal(zone.keepLargeHeadlessViews(ZN, 500), 0, 'kept: built once');
  const big = zone.headless(zone.getService('db', 'big')!, ZN);
  assert.equal(big.endpoints.length, 600);
  // a slice change updates the view built at the sync: nothing left to build
  zone.setSlice(slice('db', 'big-2', 'big', [ep('10.9.9.9', 'new')], [port('pg', 5432)]));
  assert.ok(built('big'));
  assert.equal(zone.keepLargeHeadlessViews(ZN, 500), 0);
  assert.equal(zone.headless(zone.getService('db', 'big')!, ZN).endpoints.length, 501);
  assert.equal(zone.keepLargeHeadlessViews(ZN, 10), 1, 'the small one was left for its first query');
});

test('after the sync, a headless service growing to the large size has its view built by the change that gets it there, then updated', () => {
  const zone = new Zone();
  zone.keepLargeHeadlessViews(ZN, 500);
  zone.setService(headless('db', 'grow'));
  const e = () => zone.getService('db', 'grow')!;
  const growSlice = (i: number) => slice('db', `grow-${i}`, 'grow', Array.from({ length: 100 }, (_, k) => ep(`10.7.${i}.${k}`)), [port('pg', 5432)]);
  const add = (i: number) => zone.setSlice(growSlice(i));
  for (let i = 0; i < 4; i++) add(i);
  assert.equal(e().memo?.headless, undefined, '400 addresses: left for the first query');
  add(4);
  const at500 = e().memo?.headless;
  assert.equal(at500?.endpoints.length, 500, 'built by the fifth slice');
  add(5);
  const at600 = e().memo!.headless!;
  assert.equal(at600.endpoints.length, 600);
  assert.equal(at600.byIp, at500!.byIp, 'the sixth slice updated it: no second build');
  const sorted = [0, 1, 2, 3, 4, 5].map(growSlice).sort((x, y) => (x.name < y.name ? -1 : 1));
  assert.deepEqual(canon(zone.headless(e(), ZN)), canon(mergedHeadlessView(e().info, sorted, 'grow.db.svc.cluster.local')));
  // slices that arrived before their Service: a whole build, left to the first query (a later
  // change that does not cross the size does not build it either); then updated
  for (let i = 0; i < 6; i++) zone.setSlice(slice('db', `late-${i}`, 'late', [...Array(100).keys()].map((k) => ep(`10.8.${i}.${k}`)), []));
  zone.setService(headless('db', 'late'));
  const late = () => zone.getService('db', 'late')!;
  zone.setSlice(slice('db', 'late-6', 'late', [ep('10.8.6.1')], []));
  assert.equal(late().memo?.headless, undefined);
  assert.equal(zone.headless(late(), ZN).endpoints.length, 601);
  zone.setSlice(slice('db', 'late-7', 'late', [ep('10.8.7.1')], []));
  assert.equal(late().memo?.headless?.endpoints.length, 602, 'updated');
});

test('a change of a large headless Service\'s ports keeps its view and its PTR records; publishNotReadyAddresses drops the view', () => {
  const zone = new Zone();
  zone.setService(headless('db', 'big'));
  for (let i = 0; i < 10; i++) zone.setSlice(slice('db', `big-${i}`, 'big', Array.from({ length: 100 }, (_, k) => ep(`10.1.${i}.${k}`, '', k !== 0)), [port('pg', 5432)]));
  zone.keepLargeHeadlessViews(ZN, 500);
  const e = () => zone.getService('db', 'big')!;
  const before = zone.headless(e(), ZN);
  zone.setService({ ...headless('db', 'big'), ports: [port('pg', 5433)] });
  assert.equal(zone.headless(e(), ZN), before, 'the same view: no build');
  assert.deepEqual(zone.ptrTargets('10.1.3.7', ZN), ['10-1-3-7.big.db.svc.cluster.local']);
  // a slice indexed after the change lists an address also listed before it: still one PTR
  zone.setSlice(slice('db', 'big-extra', 'big', [ep('10.1.3.7')], [port('pg', 5432)]));
  assert.deepEqual(zone.ptrTargets('10.1.3.7', ZN), ['10-1-3-7.big.db.svc.cluster.local']);
  // entries indexed before the change go with their slice
  zone.deleteSlice('db', 'big-4');
  assert.deepEqual(zone.ptrTargets('10.1.4.7', ZN), []);
  assert.equal(zone.stats().reverseIps, 900);
  zone.deleteSlice('db', 'big-extra');
  assert.deepEqual(zone.ptrTargets('10.1.3.7', ZN), ['10-1-3-7.big.db.svc.cluster.local']);
  // not-ready addresses count from now on: a new view
  assert.deepEqual(zone.ptrTargets('10.1.3.0', ZN), []);
  zone.setService({ ...headless('db', 'big', true), ports: [port('pg', 5433)] });
  assert.equal(e().memo?.headless, undefined, 'dropped: its first query builds it');
  assert.deepEqual(zone.ptrTargets('10.1.3.0', ZN), ['10-1-3-0.big.db.svc.cluster.local']);
  assert.equal(e().memo?.headless?.endpoints.length, 900);
  zone.deleteService('db', 'big');
  assert.equal(zone.stats().reverseIps, 0, 'every entry went with the Service, whichever info owned it');
});
