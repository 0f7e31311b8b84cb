// Changes in the cluster reach DNS answers within 1 s, also across a dropped watch, a 410 Gone
// relist and an API server outage; before the first sync nothing wrong is said.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService, endpointSlice, headlessService } from '@kube-dns/testkit';
import { eventually, startCluster, waitSynced } from './integration-helpers.js';

const Z = 'cluster.local';
const A = (c: Awaited<ReturnType<typeof startCluster>>, name: string) => c.ask(name, 'A').then((r) => ({ rcode: r.packet.rcode, ips: datas(r.packet.answers).sort() }));

test('added, changed and deleted Services and EndpointSlices are answered within 1 s', async (t) => {
  const c = await startCluster();
  t.after(() => c.stop());
  await waitSynced(c);
  const name = `web.shop.svc.${Z}`;
  assert.equal((await A(c, name)).rcode, 'NXDOMAIN'); // also primes the response cache with a negative answer
  c.api.upsert('services', clusterIPService('shop', 'web', ['10.3.0.1']));
  const added = await eventually(async () => assert.deepEqual((await A(c, name)).ips, ['10.3.0.1']));
  c.api.upsert('services', clusterIPService('shop', 'web', ['10.3.0.2']));
  const changed = await eventually(async () => assert.deepEqual((await A(c, name)).ips, ['10.3.0.2']));
  assert.deepEqual(datas((await c.ask('2.0.3.10.in-addr.arpa', 'PTR')).packet.answers), [`web.shop.svc.${Z}.`]);
  c.api.remove('services', 'shop', 'web');
  const deleted = await eventually(async () => assert.equal((await A(c, name)).rcode, 'NXDOMAIN'));
  for (const ms of [added, changed, deleted]) assert.ok(ms < 1000, `${ms} ms`);

  const hl = `db.shop.svc.${Z}`;
  c.api.upsert('services', headlessService('shop', 'db', [{ name: 'pg', port: 5432 }]));
  c.api.upsert('endpointslices', endpointSlice('shop', 'db', 'db-1', 'IPv4', [{ ip: '10.4.0.1', hostname: 'db-0' }]));
  await eventually(async () => assert.deepEqual((await A(c, hl)).ips, ['10.4.0.1']));
  c.api.upsert('endpointslices', endpointSlice('shop', 'db', 'db-1', 'IPv4', [{ ip: '10.4.0.1', hostname: 'db-0' }, { ip: '10.4.0.2', hostname: 'db-1' }]));
  await eventually(async () => assert.deepEqual((await A(c, hl)).ips, ['10.4.0.1', '10.4.0.2']));
  c.api.upsert('endpointslices', endpointSlice('shop', 'db', 'db-1', 'IPv4', [{ ip: '10.4.0.1', hostname: 'db-0', ready: false }, { ip: '10.4.0.2', hostname: 'db-1' }]));
  await eventually(async () => assert.deepEqual((await A(c, hl)).ips, ['10.4.0.2']), 1000);
  c.api.remove('endpointslices', 'shop', 'db-1');
  await eventually(async () => assert.equal((await A(c, hl)).rcode, 'NXDOMAIN'), 1000);
});

test('a dropped watch resumes and a 410 Gone relists: changes made meanwhile are answered within 1 s', async (t) => {
  const c = await startCluster({ seed: (api) => api.upsert('services', clusterIPService('default', 'old', ['10.5.0.1'])) });
  t.after(() => c.stop());
  await waitSynced(c);
  await c.api.waitForWatches('services', 1);
  c.api.faults.dropWatches({ abrupt: true });
  c.api.upsert('services', clusterIPService('default', 'after-drop', ['10.5.0.2']));
  await eventually(async () => assert.deepEqual((await A(c, `after-drop.default.svc.${Z}`)).ips, ['10.5.0.2']), 1000);

  // 410: the history is gone; an object deleted while the watch was down must disappear (relist)
  await c.api.faults.pause();
  c.api.remove('services', 'default', 'old');
  c.api.upsert('services', clusterIPService('default', 'after-410', ['10.5.0.3']));
  c.api.faults.compactHistory();
  await c.api.faults.resume();
  await eventually(async () => {
    assert.deepEqual((await A(c, `after-410.default.svc.${Z}`)).ips, ['10.5.0.3']);
    assert.equal((await A(c, `old.default.svc.${Z}`)).rcode, 'NXDOMAIN');
  }, 3000);
  const stats = c.dns.sync.stats() as Record<string, { relists?: number }>;
  assert.ok((stats.services?.relists ?? 0) >= 1, 'relisted after 410');
});

test('while the API server is down the last records keep being served', async (t) => {
  const c = await startCluster({ seed: (api) => api.upsert('services', clusterIPService('default', 'stay', ['10.6.0.1'])) });
  t.after(() => c.stop());
  await waitSynced(c);
  await c.api.faults.pause();
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual((await A(c, `stay.default.svc.${Z}`)).ips, ['10.6.0.1']);
  assert.equal((await c.http('/readiness')).status, 200, 'still ready: the records are good');
  await c.api.faults.resume();
  c.api.upsert('services', clusterIPService('default', 'back', ['10.6.0.2']));
  await eventually(async () => assert.deepEqual((await A(c, `back.default.svc.${Z}`)).ips, ['10.6.0.2']), 5000);
});

test('before the first sync: SERVFAIL for cluster names and /readiness 503; then answers', async (t) => {
  const c = await startCluster({
    seed: async (api) => {
      api.upsert('services', clusterIPService('default', 'x', ['10.7.0.1']));
      await api.faults.pause(); // the API server is unreachable when kube-dns starts
    },
  });
  t.after(() => c.stop());
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(c.dns.sync.synced, false);
  assert.equal((await A(c, `x.default.svc.${Z}`)).rcode, 'SERVFAIL');
  assert.equal((await A(c, `nosuch.default.svc.${Z}`)).rcode, 'SERVFAIL', 'not a wrong NXDOMAIN');
  const ready = await c.http('/readiness');
  assert.equal(ready.status, 503);
  assert.match(ready.body, /waiting/);
  await c.api.faults.resume();
  await waitSynced(c, 10_000);
  assert.deepEqual((await A(c, `x.default.svc.${Z}`)).ips, ['10.7.0.1']);
  assert.equal((await c.http('/readiness')).status, 200);
});
