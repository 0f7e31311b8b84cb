// Fresh answers through the pod (docs/freshness.md): with the manifest's arguments, a changed or
// deleted cluster record is served through dnsmasq's port within 1 s of the API change, while a
// repeated external name is still answered from dnsmasq's cache.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService, endpointSlice, headlessService } from '@kube-dns/testkit';
import { eventually } from './integration-helpers.js';
import { manifestTtl, startPod } from './pod-through-dnsmasq.js';

const BOUND_MS = 1000;

test('through dnsmasq: a headless endpoint change and a Service deletion are served within 1 s', async (t) => {
  const pod = await startPod({
    seed: (api) => {
      api.upsert('services', headlessService('shop', 'db', [{ name: 'pg', port: 5432 }]));
      api.upsert('endpointslices', endpointSlice('shop', 'db', 'db-1', 'IPv4', [{ ip: '10.4.0.1', hostname: 'db-0' }]));
      api.upsert('services', clusterIPService('shop', 'web', ['10.3.0.1']));
    },
  });
  t.after(() => pod.stop());
  const db = 'db.shop.svc.cluster.local';
  const web = 'web.shop.svc.cluster.local';
  const ips = async (name: string) => {
    const r = await pod.ask(name, 'A');
    return { rcode: r.packet.rcode, ips: datas(r.packet.answers).sort(), ttls: (r.packet.answers ?? []).map((a) => (a as { ttl?: number }).ttl) };
  };

  // asked repeatedly first, as busy clients do: whatever dnsmasq would cache, it has now
  for (let i = 0; i < 5; i++) {
    assert.deepEqual((await ips(db)).ips, ['10.4.0.1']);
    assert.deepEqual((await ips(`db-0.${db}`)).ips, ['10.4.0.1']);
    assert.deepEqual((await ips(web)).ips, ['10.3.0.1']);
  }
  // the TTL clients see is the manifest's --ttl (docs/freshness.md)
  assert.deepEqual((await ips(db)).ttls, [manifestTtl()]);

  // a pod restarts with a new IP
  pod.api.upsert('endpointslices', endpointSlice('shop', 'db', 'db-1', 'IPv4', [{ ip: '10.4.0.9', hostname: 'db-0' }]));
  const changed = await eventually(async () => {
    assert.deepEqual((await ips(db)).ips, ['10.4.0.9']);
    assert.deepEqual((await ips(`db-0.${db}`)).ips, ['10.4.0.9']);
  }, 5000, 10);
  assert.ok(changed < BOUND_MS, `the new endpoint reached dnsmasq's clients after ${changed} ms`);

  // a deleted Service is NXDOMAIN (and stays so: dnsmasq runs with --no-negcache)
  pod.api.remove('services', 'shop', 'web');
  const deleted = await eventually(async () => assert.equal((await ips(web)).rcode, 'NXDOMAIN'), 5000, 10);
  assert.ok(deleted < BOUND_MS, `the deleted Service was NXDOMAIN after ${deleted} ms`);
  pod.api.remove('services', 'shop', 'db');
  const deletedHeadless = await eventually(async () => assert.equal((await ips(db)).rcode, 'NXDOMAIN'), 5000, 10);
  assert.ok(deletedHeadless < BOUND_MS, `the deleted headless Service was NXDOMAIN after ${deletedHeadless} ms`);
  // re-created: visible again at once (no negative answer was cached)
  pod.api.upsert('services', clusterIPService('shop', 'web', ['10.3.0.2']));
  const recreated = await eventually(async () => assert.deepEqual((await ips(web)).ips, ['10.3.0.2']), 5000, 10);
  assert.ok(recreated < BOUND_MS, `the re-created Service was answered after ${recreated} ms`);
});

test('through dnsmasq: a repeated external name is a dnsmasq cache hit, cluster names are not cached', async (t) => {
  const pod = await startPod({ seed: (api) => api.upsert('services', clusterIPService('default', 'api', ['10.3.0.7'])) });
  t.after(() => pod.stop());
  const asked = (name: string) => pod.upstream.questions.filter((q) => q.name === name && q.type === 'A').length;

  const hits0 = await pod.cacheHits();
  for (let i = 0; i < 10; i++) assert.deepEqual(datas((await pod.ask('www.example.com', 'A')).packet.answers), ['192.0.2.80']);
  assert.equal(asked('www.example.com'), 1, 'the upstream was asked once; dnsmasq answered the rest');
  const hits1 = await pod.cacheHits();
  assert.equal(hits1 - hits0, 9, 'dnsmasq counted the 9 repeats as cache hits');

  // cluster names: none is a dnsmasq cache hit, every question reaches kube-dns
  const lookups = async () => {
    const m = (await pod.cluster.http('/metrics')).body;
    const v = (k: string) => Number(m.match(new RegExp(`^kubedns_dns_response_cache_${k}_total (\\d+)`, 'm'))?.[1] ?? NaN);
    return v('hits') + v('misses');
  };
  const reached0 = await lookups();
  for (let i = 0; i < 10; i++) assert.deepEqual(datas((await pod.ask('api.default.svc.cluster.local', 'A')).packet.answers), ['10.3.0.7']);
  const hits2 = await pod.cacheHits();
  assert.equal(hits2 - hits1, 0, 'no cluster answer came from dnsmasq\'s cache');
  assert.equal((await lookups()) - reached0, 10, 'all 10 cluster questions reached kube-dns');
});
