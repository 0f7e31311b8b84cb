// Round-robin through the pod: clients that take the first record of a headless service's
// answer spread evenly over its pods, for A and SRV, through a real dnsmasq run with the
// manifest's arguments (which no longer caches cluster names, so kube-dns must rotate itself).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { datas } from '@kube-dns/dns-client';
import { endpointSlice, headlessService } from '@kube-dns/testkit';
import { startPod } from './pod-through-dnsmasq.js';

const LOOKUPS = 1000;
const PODS = [
  { ip: '10.4.0.1', hostname: 'db-0' },
  { ip: '10.4.0.2', hostname: 'db-1' },
  { ip: '10.4.0.3', hostname: 'db-2' },
];

/** Each key's share of `firsts`, asserted to be a third ± 5 points. */
function assertEvenThirds(firsts: string[], keys: string[], what: string): void {
  const counts = new Map(keys.map((k) => [k, 0]));
  for (const f of firsts) {
    assert.ok(counts.has(f), `${what}: unexpected first record ${f}`);
    counts.set(f, counts.get(f)! + 1);
  }
  for (const [k, n] of counts) {
    const share = n / firsts.length;
    assert.ok(Math.abs(share - 1 / 3) <= 0.05, `${what}: ${k} first in ${n} of ${firsts.length} (${(share * 100).toFixed(1)}%)`);
  }
}

test(`through dnsmasq, over ${LOOKUPS} lookups each pod of a 3-pod headless service is first a third of the time (A and SRV)`, async (t) => {
  const pod = await startPod({
    seed: (api) => {
      api.upsert('services', headlessService('shop', 'db', [{ name: 'pg', port: 5432 }]));
      api.upsert('endpointslices', endpointSlice('shop', 'db', 'db-1', 'IPv4', PODS, [{ name: 'pg', port: 5432 }]));
    },
  });
  t.after(() => pod.stop());

  const firstA: string[] = [];
  for (let i = 0; i < LOOKUPS; i++) {
    const r = await pod.ask('db.shop.svc.cluster.local', 'A');
    const ips = datas(r.packet.answers);
    assert.deepEqual([...ips].sort(), PODS.map((p) => p.ip), 'every answer holds all three pods');
    firstA.push(ips[0]!);
  }
  assertEvenThirds(firstA, PODS.map((p) => p.ip), 'A');
  // the rotation also applies to replies from kube-dns's response cache (nearly all of them here)
  const metrics = (await pod.cluster.http('/metrics')).body;
  const cacheHits = Number(metrics.match(/^kubedns_dns_response_cache_hits_total (\d+)/m)?.[1]);
  assert.ok(cacheHits >= LOOKUPS - 10, `${cacheHits} of ${LOOKUPS} answers came from kube-dns's response cache`);

  const firstSrv: string[] = [];
  for (let i = 0; i < LOOKUPS; i++) {
    const r = await pod.ask('_pg._tcp.db.shop.svc.cluster.local', 'SRV');
    const targets = (r.packet.answers ?? []).map((a) => String((a as { data?: { target?: string } }).data?.target));
    assert.deepEqual([...targets].sort(), PODS.map((p) => `${p.hostname}.db.shop.svc.cluster.local`), 'every answer holds all three pods');
    // each target's address still comes along in the additional section
    const extra = new Map((r.packet.additionals ?? []).filter((a) => a.type === 'A').map((a) => [a.name, String((a as { data?: unknown }).data)]));
    for (const p of PODS) assert.equal(extra.get(`${p.hostname}.db.shop.svc.cluster.local`), p.ip);
    firstSrv.push(targets[0]!);
  }
  assertEvenThirds(firstSrv, PODS.map((p) => `${p.hostname}.db.shop.svc.cluster.local`), 'SRV');
});
