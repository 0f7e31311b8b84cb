import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DepGenerations } from '../src/records/generations.js';
import { Zone } from '../src/records/zone.js';
import { clusterIPService, endpointSlice, externalNameService, headlessService } from '@kube-dns/testkit';
import { serviceFromKube, sliceFromKube } from '../src/records/from-kube.js';
import { clusterIP, data, ep, externalName, headless, port, q, slice, summary, zoneWith } from './resolve-fixtures.js';

const A = 'svc/default/a';
const B = 'svc/default/b';
const ZN = 'cluster.local';

test('an update changes its service’s generation and "*", not another service’s', () => {
  const z = zoneWith(clusterIP('default', 'a', ['10.0.0.1']), clusterIP('default', 'b', ['10.0.0.2']));
  const before = { a: z.depGeneration(A), b: z.depGeneration(B), all: z.depGeneration('*'), gen: z.generation };
  z.setService(clusterIP('default', 'a', ['10.0.0.9']));
  assert.ok(z.depGeneration(A) > before.a);
  assert.equal(z.depGeneration(B), before.b);
  assert.ok(z.depGeneration('*') > before.all);
  assert.ok(z.generation > before.gen);
  assert.equal(z.depGeneration('static'), 0);
  // a slice of b moves b only
  const a2 = z.depGeneration(A);
  z.setSlice(slice('default', 'b-1', 'b', [ep('10.1.0.1')]));
  assert.equal(z.depGeneration(A), a2);
  assert.ok(z.depGeneration(B) > before.b);
});

test('unchanged objects (resyncs, relists) change no generation', () => {
  const z = zoneWith(clusterIP('default', 'a', ['10.0.0.1'], [port('http', 80)]));
  z.setSlice(slice('default', 'a-1', 'a', [ep('10.1.0.1', 'x')], [port('http', 8080)]));
  z.setPod({ namespace: 'default', name: 'p', ips: ['10.1.0.1'] });
  const gen = z.generation;
  z.setService(clusterIP('default', 'a', ['10.0.0.1'], [port('http', 80)]));
  z.setSlice(slice('default', 'a-1', 'a', [ep('10.1.0.1', 'x')], [port('http', 8080)]));
  z.setPod({ namespace: 'default', name: 'p', ips: ['10.1.0.1'] });
  z.deleteService('default', 'nosuch');
  z.deleteSlice('default', 'nosuch');
  z.deletePod('default', 'nosuch');
  assert.equal(z.generation, gen);
  // a real change in each kind does move it
  z.setSlice(slice('default', 'a-1', 'a', [ep('10.1.0.1', 'x', false)], [port('http', 8080)]));
  assert.equal(z.generation, gen + 1);
});

test('delete then re-create never returns an old generation (also across tombstone purges)', () => {
  const z = zoneWith();
  const seen = new Set<number>([z.depGeneration(A)]);
  for (let i = 0; i < 5; i++) {
    z.setService(clusterIP('default', 'a', [`10.0.0.${i + 1}`]));
    assert.ok(!seen.has(z.depGeneration(A)), `create ${i}`);
    seen.add(z.depGeneration(A));
    z.deleteService('default', 'a');
    assert.ok(!seen.has(z.depGeneration(A)), `delete ${i}`);
    seen.add(z.depGeneration(A));
  }
  // purging tombstones: a key forgotten reports a value above anything it had
  const g = new DepGenerations(2);
  g.bump('k', 5);
  g.bury('k', 6);
  g.bury('x', 7);
  g.bury('y', 8); // > 2 tombstones: purge, floor = 8
  assert.equal(g.tombstoneCount, 0);
  assert.ok(g.get('k') > 6);
  g.bump('k', 9);
  assert.equal(g.get('k'), 9);
  assert.ok(g.get('never-seen') >= 8);
});

test('negative answers depend on the service appearing', () => {
  const z = zoneWith();
  const r = q(z, 'a.default.svc.cluster.local', 'A');
  assert.equal(r.rcode, 'NXDOMAIN');
  const g = z.depGeneration(r.dep);
  z.setService(clusterIP('default', 'a', ['10.0.0.1']));
  assert.notEqual(z.depGeneration(r.dep), g);
  // a slice arriving before the service already moves the service's dep
  const g2 = z.depGeneration(B);
  z.setSlice(slice('default', 'b-1', 'b', [ep('10.1.0.1')]));
  assert.notEqual(z.depGeneration(B), g2);
});

test('derived per-service data is rebuilt after each change (no stale memo)', () => {
  const z = zoneWith(headless('default', 'h'));
  z.setSlice(slice('default', 'h-1', 'h', [ep('10.1.0.1')]));
  assert.deepEqual(data(q(z, 'h.default.svc.cluster.local', 'A'), 'A'), ['10.1.0.1']);
  z.setSlice(slice('default', 'h-2', 'h', [ep('10.1.0.2')]));
  assert.deepEqual(data(q(z, 'h.default.svc.cluster.local', 'A'), 'A'), ['10.1.0.1', '10.1.0.2']);
  z.setService(headless('default', 'h', true));
  z.setSlice(slice('default', 'h-2', 'h', [ep('10.1.0.2', '', false)]));
  assert.deepEqual(data(q(z, 'h.default.svc.cluster.local', 'A'), 'A'), ['10.1.0.1', '10.1.0.2']);
  z.setService(headless('default', 'h', false));
  assert.deepEqual(data(q(z, 'h.default.svc.cluster.local', 'A'), 'A'), ['10.1.0.1']);
});

test('service kind changes move the reverse records with them', () => {
  const z = zoneWith(clusterIP('default', 's', ['10.0.0.5']));
  z.setSlice(slice('default', 's-1', 's', [ep('10.1.0.5', 'pod')]));
  assert.equal(summary(q(z, '5.0.0.10.in-addr.arpa', 'PTR')), 'NOERROR | PTR s.default.svc.cluster.local.');
  assert.equal(q(z, '5.0.1.10.in-addr.arpa', 'PTR').action, 'forward'); // ClusterIP: endpoints have no PTR
  z.setService(headless('default', 's'));
  assert.equal(q(z, '5.0.0.10.in-addr.arpa', 'PTR').action, 'forward');
  assert.equal(summary(q(z, '5.0.1.10.in-addr.arpa', 'PTR')), 'NOERROR | PTR pod.s.default.svc.cluster.local.');
  z.setService(externalName('default', 's', 'example.com'));
  assert.equal(q(z, '5.0.1.10.in-addr.arpa', 'PTR').action, 'forward');
  assert.equal(summary(q(z, 's.default.svc.cluster.local', 'CNAME')), 'NOERROR | CNAME example.com.');
  z.setService(clusterIP('default', 's', ['10.0.0.6']));
  assert.equal(summary(q(z, '6.0.0.10.in-addr.arpa', 'PTR')), 'NOERROR | PTR s.default.svc.cluster.local.');
  assert.equal(z.stats().reverseIps, 1);
});

test('an IP owned by several services gets one PTR per owner; an address in two slices survives one', () => {
  const z = zoneWith(headless('default', 'h1'), headless('other', 'h2'));
  z.setSlice(slice('default', 'h1-a', 'h1', [ep('10.1.0.1', 'x')]));
  z.setSlice(slice('default', 'h1-b', 'h1', [ep('10.1.0.1', 'x')]));
  z.setSlice(slice('other', 'h2-a', 'h2', [ep('10.1.0.1')]));
  assert.equal(
    summary(q(z, '1.0.1.10.in-addr.arpa', 'PTR')),
    'NOERROR | PTR 10-1-0-1.h2.other.svc.cluster.local. | PTR x.h1.default.svc.cluster.local.',
  );
  z.deleteSlice('default', 'h1-a');
  assert.equal(q(z, '1.0.1.10.in-addr.arpa', 'PTR').answers.length, 2);
  z.deleteSlice('default', 'h1-b');
  assert.equal(summary(q(z, '1.0.1.10.in-addr.arpa', 'PTR')), 'NOERROR | PTR 10-1-0-1.h2.other.svc.cluster.local.');
  z.deleteService('other', 'h2');
  assert.equal(q(z, '1.0.1.10.in-addr.arpa', 'PTR').action, 'forward');
  assert.equal(z.stats().reverseIps, 0); // only existing headless services index their slices
  assert.equal(z.stats().endpointSlices, 1); // h2's slice is kept for a service that may come back
  z.setService(headless('other', 'h2'));
  assert.equal(summary(q(z, '1.0.1.10.in-addr.arpa', 'PTR')), 'NOERROR | PTR 10-1-0-1.h2.other.svc.cluster.local.');
});

test('a slice relabelled to another service moves with its label', () => {
  const z = zoneWith(headless('default', 'one'), headless('default', 'two'));
  z.setSlice(slice('default', 's', 'one', [ep('10.1.0.1')]));
  assert.equal(q(z, 'two.default.svc.cluster.local', 'A').rcode, 'NXDOMAIN');
  const g1 = z.depGeneration('svc/default/one');
  z.setSlice(slice('default', 's', 'two', [ep('10.1.0.1')]));
  assert.equal(q(z, 'one.default.svc.cluster.local', 'A').rcode, 'NXDOMAIN');
  assert.deepEqual(data(q(z, 'two.default.svc.cluster.local', 'A'), 'A'), ['10.1.0.1']);
  assert.notEqual(z.depGeneration('svc/default/one'), g1);
  assert.equal(summary(q(z, '1.0.1.10.in-addr.arpa', 'PTR')), 'NOERROR | PTR 10-1-0-1.two.default.svc.cluster.local.');
  assert.equal(z.stats().endpointSlices, 1);
});

test('namespaces exist while they hold a service', () => {
  const z = zoneWith(clusterIP('ns1', 'a', ['10.0.0.1']));
  assert.equal(q(z, 'ns1.svc.cluster.local', 'A').rcode, 'NOERROR');
  z.deleteService('ns1', 'a');
  assert.equal(q(z, 'ns1.svc.cluster.local', 'A').rcode, 'NXDOMAIN');
});

test('stats count what the zone holds', () => {
  const z = zoneWith(
    clusterIP('default', 'a', ['10.0.0.1', 'fd00::1']),
    headless('default', 'h'),
    externalName('kube-system', 'e', 'example.com'),
  );
  z.setSlice(slice('default', 'h-1', 'h', [ep('10.1.0.1'), ep('10.1.0.2', '', false)]));
  z.setSlice(slice('default', 'a-1', 'a', [ep('10.2.0.1')]));
  z.setPod({ namespace: 'default', name: 'p', ips: ['10.1.0.1'] });
  assert.deepEqual(z.stats(), {
    services: 3,
    clusterIPServices: 1,
    headlessServices: 1,
    externalNameServices: 1,
    namespaces: 2,
    endpointSlices: 2,
    endpoints: 3,
    pods: 1,
    reverseIps: 4, // two cluster IPs + the headless slice's two addresses (readiness is checked on query)
    generation: z.generation,
    tombstones: 0,
  });
  z.deleteService('default', 'h');
  assert.equal(z.stats().tombstones, 0); // its slice still exists
  z.deleteSlice('default', 'h-1');
  assert.equal(z.stats().tombstones, 1);
  assert.equal(z.stats().endpoints, 1);
});

test('a zone answers for the zone name it is asked about (memo keyed by zone)', () => {
  const z = new Zone();
  z.setService(headless('default', 'h'));
  z.setSlice(slice('default', 'h-1', 'h', [ep('10.1.0.1')]));
  assert.deepEqual(data(q(z, '1.0.1.10.in-addr.arpa', 'PTR'), 'PTR'), ['10-1-0-1.h.default.svc.cluster.local.']);
  assert.deepEqual(data(q(z, '1.0.1.10.in-addr.arpa', 'PTR', { zone: 'k8s.test' }), 'PTR'), ['10-1-0-1.h.default.svc.k8s.test.']);
});

test('without the wildcard indexes (no --wildcards) a zone answers the same, and wildcard lookups stay correct', () => {
  const objects = [clusterIP('ns1', 'a', ['10.0.0.1']), clusterIP('ns2', 'a', ['10.0.0.2']), clusterIP('ns2', 'b', ['10.0.0.3'])];
  const lean = new Zone({ wildcards: false });
  const full = new Zone();
  for (const z of [lean, full]) for (const s of objects) z.setService(s);
  for (const name of ['a.ns1.svc.cluster.local', 'a.ns2.svc.cluster.local', 'b.ns1.svc.cluster.local', '2.0.0.10.in-addr.arpa', 'ns2.svc.cluster.local']) {
    for (const type of ['A', 'PTR']) assert.deepEqual(summary(q(lean, name, type)), summary(q(full, name, type)), `${name} ${type}`);
  }
  // what nothing reads without --wildcards still gives right (if slower or coarser) answers
  assert.deepEqual([...lean.servicesNamed('a')].map((e) => e.info.namespace).sort(), ['ns1', 'ns2']);
  assert.deepEqual([...lean.servicesNamed('nosuch')], []);
  const before = lean.depGeneration('name/b');
  lean.setService(clusterIP('ns1', 'zzz', ['10.0.0.9'])); // another name: the coarse generation moves anyway
  assert.ok(lean.depGeneration('name/b') > before);
});

test('an IPv4-mapped address (::ffff:a.b.c.d) is IPv4: A, in-addr.arpa, never AAAA (as Go net.IP.To4)', () => {
  const z = new Zone();
  for (const svc of [
    clusterIPService('default', 'mapped', ['::ffff:10.0.0.7']),
    headlessService('default', 'hl'),
    externalNameService('default', 'lit', '::ffff:192.0.2.9'),
  ]) {
    z.setService(serviceFromKube(svc)!);
  }
  z.setSlice(sliceFromKube(endpointSlice('default', 'hl', 'hl-v4', 'IPv4', [{ ip: '::ffff:10.1.0.5' }]))!);
  assert.equal(summary(q(z, 'mapped.default.svc.cluster.local', 'A')), 'NOERROR | A 10.0.0.7');
  assert.equal(summary(q(z, 'mapped.default.svc.cluster.local', 'AAAA')), 'NOERROR');
  assert.equal(summary(q(z, 'hl.default.svc.cluster.local', 'A')), 'NOERROR | A 10.1.0.5');
  assert.equal(summary(q(z, 'hl.default.svc.cluster.local', 'AAAA')), 'NOERROR');
  assert.equal(summary(q(z, '5.0.1.10.in-addr.arpa', 'PTR')), 'NOERROR | PTR 10-1-0-5.hl.default.svc.cluster.local.');
  assert.equal(summary(q(z, 'lit.default.svc.cluster.local', 'A')), 'NOERROR | A 192.0.2.9');
  assert.equal(summary(q(z, 'lit.default.svc.cluster.local', 'AAAA')), 'NOERROR');
});
