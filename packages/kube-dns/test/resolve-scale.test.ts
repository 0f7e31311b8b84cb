// 10k services: every name resolves correctly and derived data is built once per change, not per
// query. No timing assertions (benchmarks measure speed); heap use is reported as a diagnostic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Zone } from '../src/records/zone.js';
import { clusterIP, ep, headless, port, q, slice } from './resolve-fixtures.js';

const N = 10_000;
const ip = (i: number, base: number): string => `10.${base}.${(i >> 8) & 255}.${i & 255}`;

test('10k services: names, SRV and PTR resolve; headless views are memoised', (t) => {
  const heapBefore = process.memoryUsage().heapUsed;
  const z = new Zone();
  for (let i = 0; i < N; i++) {
    const ns = `ns${i % 100}`;
    if (i % 5 === 0) {
      z.setSlice(slice(ns, `h${i}-1`, `h${i}`, [ep(ip(i, 1), 'pet-0'), ep(ip(i, 2)), ep(ip(i, 3))], [port('http', 80)]));
      z.setService(headless(ns, `h${i}`));
    } else {
      z.setService(clusterIP(ns, `s${i}`, [ip(i, 0)], [port('http', 80), port('metrics', 9090)]));
      z.setSlice(slice(ns, `s${i}-1`, `s${i}`, [ep(ip(i, 4)), ep(ip(i, 5))], [port('http', 8080)]));
    }
  }
  assert.equal(z.stats().services, N);
  for (let i = 0; i < N; i++) {
    const ns = `ns${i % 100}`;
    if (i % 5 === 0) {
      const name = `h${i}.${ns}.svc.cluster.local`;
      const e = z.getService(ns, `h${i}`)!;
      const view = z.headless(e, 'cluster.local');
      assert.equal(q(z, name, 'A').answers.length, 3);
      assert.equal(q(z, `_http._tcp.${name}`, 'SRV').answers.length, 3);
      const rev = ip(i, 1).split('.').reverse().join('.');
      assert.equal(q(z, `${rev}.in-addr.arpa`, 'PTR').answers.length, 1);
      assert.equal(z.headless(e, 'cluster.local'), view, 'the merged view outlives the queries: built once, not per query');
    } else {
      const name = `s${i}.${ns}.svc.cluster.local`;
      const a = q(z, name, 'A');
      assert.equal(a.answers.length, 1);
      assert.equal(q(z, `_metrics._tcp.${name}`, 'SRV').answers.length, 1);
      const rev = ip(i, 0).split('.').reverse().join('.');
      assert.equal(q(z, `${rev}.in-addr.arpa`, 'PTR').answers.length, 1);
    }
  }
  assert.equal(q(z, 'nosuch.ns1.svc.cluster.local', 'A').rcode, 'NXDOMAIN');
  // A change elsewhere leaves a service's view alone; a change to its own slices replaces it.
  const h0 = z.getService('ns0', 'h0')!;
  const view0 = z.headless(h0, 'cluster.local');
  z.setService(clusterIP('ns1', 's101', [ip(101, 0), ip(101, 6)], [port('http', 80)]));
  z.setSlice(slice('ns0', 'h100-1', 'h100', [ep(ip(100, 1))], [port('http', 80)]));
  assert.equal(z.headless(z.getService('ns0', 'h0')!, 'cluster.local'), view0, 'untouched by changes to other services');
  z.setSlice(slice('ns0', 'h0-1', 'h0', [ep(ip(0, 1), 'pet-0')], [port('http', 80)]));
  const rebuilt = z.headless(z.getService('ns0', 'h0')!, 'cluster.local');
  assert.notEqual(rebuilt, view0, 'rebuilt after its own slice changed');
  assert.equal(rebuilt.endpoints.length, 1);
  assert.equal(q(z, 'h0.ns0.svc.cluster.local', 'A').answers.length, 1);
  // the namespace wildcard visits every namespace
  assert.equal(q(z, 's1.*.svc.cluster.local', 'A').answers.length, 1);
  t.diagnostic(`heap for ${N} services + slices, all queried once: ${((process.memoryUsage().heapUsed - heapBefore) / 1e6).toFixed(1)} MB`);
});

test('a large headless service (1000 endpoints in 10 slices) merges once per change', () => {
  const z = new Zone();
  z.setService(headless('big', 'h'));
  for (let s = 0; s < 10; s++) {
    const eps = Array.from({ length: 100 }, (_, i) => ep(`10.9.${s}.${i + 1}`, `pod-${s}-${i}`));
    z.setSlice(slice('big', `h-${s}`, 'h', eps, [port('http', 80)]));
  }
  const e = z.getService('big', 'h')!;
  const view = z.headless(e, 'cluster.local');
  assert.equal(view.endpoints.length, 1000);
  for (let i = 0; i < 100; i++) q(z, `pod-3-${i}.h.big.svc.cluster.local`, 'A');
  assert.equal(z.headless(e, 'cluster.local'), view);
  const srv = q(z, '_http._tcp.h.big.svc.cluster.local', 'SRV');
  assert.equal(srv.answers.length, 1000);
  assert.equal(srv.additionals.length, 1000);
  z.setSlice(slice('big', 'h-0', 'h', [], [port('http', 80)]));
  assert.notEqual(z.headless(z.getService('big', 'h')!, 'cluster.local'), view);
  assert.equal(q(z, 'h.big.svc.cluster.local', 'A').answers.length, 900);
});
