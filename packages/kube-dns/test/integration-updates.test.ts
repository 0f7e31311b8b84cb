// Changes in the cluster reach DNS answers, also across a dropped watch, a 410 Gone relist and an
// API server outage; before the first sync nothing wrong is said. How fast a change propagates is
// the bench's business: here every wait is an event or a poll with a generous deadline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService, endpointSlice, headlessService } from '@kube-dns/testkit';
import { eventually, startCluster, waitSynced } from './integration-helpers.js';

const Z = 'cluster.local';
/** Deadline for a change to show up in DNS: far beyond any normal propagation, even on a loaded machine. */
const SOON = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const A = (c: Awaited<ReturnType<typeof startCluster>>, name: string) => c.ask(name, 'A').then((r) => ({ rcode: r.packet.rcode, ips: datas(r.packet.answers).sort() }));

test('added, changed and deleted Services and EndpointSlices are answered', async (t) => {
  const c = await startCluster();
  t.after(() => c.stop());
  await waitSynced(c, SOON);
  const name = `web.shop.svc.${Z}`;
  assert.equal((await A(c, name)).rcode, 'NXDOMAIN'); // also primes the response cache with a negative answer
  c.api.upsert('services', clusterIPService('shop', 'web', ['10.3.0.1']));
  await eventually(async () => assert.deepEqual((await A(c, name)).ips, ['10.3.0.1']), SOON);
  c.api.upsert('services', clusterIPService('shop', 'web', ['10.3.0.2']));
  await eventually(async () => assert.deepEqual((await A(c, name)).ips, ['10.3.0.2']), SOON);
  assert.deepEqual(datas((await c.ask('2.0.3.10.in-addr.arpa', 'PTR')).packet.answers), [`web.shop.svc.${Z}.`]);
  c.api.remove('services', 'shop', 'web');
  await eventually(async () => assert.equal((await A(c, name)).rcode, 'NXDOMAIN'), SOON);

  const hl = `db.shop.svc.${Z}`;
  c.api.upsert('services', headlessService('shop', 'db', [{ name: 'pg', port: 5432 }]));
  c.api.upsert('endpointslices', endpointSlice('shop', 'db', 'db-1', 'IPv4', [{ ip: '10.4.0.1', hostname: 'db-0' }]));
  await eventually(async () => assert.deepEqual((await A(c, hl)).ips, ['10.4.0.1']), SOON);
  c.api.upsert('endpointslices', endpointSlice('shop', 'db', 'db-1', 'IPv4', [{ ip: '10.4.0.1', hostname: 'db-0' }, { ip: '10.4.0.2', hostname: 'db-1' }]));
  await eventually(async () => assert.deepEqual((await A(c, hl)).ips, ['10.4.0.1', '10.4.0.2']), SOON);
  c.api.upsert('endpointslices', endpointSlice('shop', 'db', 'db-1', 'IPv4', [{ ip: '10.4.0.1', hostname: 'db-0', ready: false }, { ip: '10.4.0.2', hostname: 'db-1' }]));
  await eventually(async () => assert.deepEqual((await A(c, hl)).ips, ['10.4.0.2']), SOON);
  c.api.remove('endpointslices', 'shop', 'db-1');
  await eventually(async () => assert.equal((await A(c, hl)).rcode, 'NXDOMAIN'), SOON);
});

test('a dropped watch resumes and a 410 Gone relists: changes made meanwhile are answered', async (t) => {
  const c = await startCluster({ seed: (api) => api.upsert('services', clusterIPService('default', 'old', ['10.5.0.1'])) });
  t.after(() => c.stop());
  await waitSynced(c, SOON);
  await c.api.waitForWatches('services', 1);
  c.api.faults.dropWatches({ abrupt: true });
  c.api.upsert('services', clusterIPService('default', 'after-drop', ['10.5.0.2']));
  await eventually(async () => assert.deepEqual((await A(c, `after-drop.default.svc.${Z}`)).ips, ['10.5.0.2']), SOON);

  // 410: the history is gone; an object deleted while the watch was down must disappear (relist)
  await c.api.faults.pause();
  c.api.remove('services', 'default', 'old');
  c.api.upsert('services', clusterIPService('default', 'after-410', ['10.5.0.3']));
  c.api.faults.compactHistory();
  await c.api.faults.resume();
  await eventually(async () => {
    assert.deepEqual((await A(c, `after-410.default.svc.${Z}`)).ips, ['10.5.0.3']);
    assert.equal((await A(c, `old.default.svc.${Z}`)).rcode, 'NXDOMAIN');
  }, SOON);
  const stats = c.dns.sync.stats() as Record<string, { relists?: number }>;
  assert.ok((stats.services?.relists ?? 0) >= 1, 'relisted after 410');
});

test('an API server outage that outlasts several reconnect backoffs: the last records are served throughout, and a change made meanwhile arrives after', async (t) => {
  const c = await startCluster({ seed: (api) => api.upsert('services', clusterIPService('default', 'stay', ['10.6.0.1'])) });
  t.after(() => c.stop());
  await waitSynced(c, SOON);
  const errors = () => (c.dns.sync.stats() as Record<string, { errors?: number }>).services?.errors ?? 0;
  const before = errors();
  const downAt = Date.now();
  await c.api.faults.pause();
  // Down until the services reflector has failed 4 times (the dropped watch, then 3 reconnects
  // 200, 400 and 800 ms apart): an outage past the backoff, not a blip inside its first step.
  let served = 0;
  while (errors() - before < 4) {
    assert.ok(Date.now() - downAt < 60_000, `only ${errors() - before} failed reconnects in a minute`);
    assert.deepEqual((await A(c, `stay.default.svc.${Z}`)).ips, ['10.6.0.1'], 'the last records are served');
    assert.equal((await A(c, `nosuch.default.svc.${Z}`)).rcode, 'NXDOMAIN', 'and negative answers stay right');
    served++;
    await sleep(50);
  }
  assert.equal((await c.http('/readiness')).status, 200, 'still ready: the records are good');
  c.api.upsert('services', clusterIPService('default', 'back', ['10.6.0.2'])); // made while it is down
  const outageMs = Date.now() - downAt;
  await c.api.faults.resume();
  await eventually(async () => assert.deepEqual((await A(c, `back.default.svc.${Z}`)).ips, ['10.6.0.2']), SOON);
  assert.deepEqual((await A(c, `stay.default.svc.${Z}`)).ips, ['10.6.0.1']);
  t.diagnostic(`${served} rounds of lookups answered during a ${outageMs} ms outage with ${errors() - before} failed reconnects`);
});

test('not ready: /readiness names the resource not yet listed and why (Pods forbidden with --pods=verified)', async (t) => {
  const c = await startCluster({
    args: ['--pods=verified'],
    seed: (api) => {
      api.upsert('services', clusterIPService('default', 'x', ['10.7.0.1']));
      api.faults.failRequests(1_000_000, 403, { resource: 'pods', watch: false });
    },
  });
  t.after(() => c.stop());
  await eventually(async () => {
    const ready = await c.http('/readiness');
    assert.equal(ready.status, 503);
    assert.match(ready.body, /pods not listed \([1-9]\d* errors?, last: [^)]*403/);
  }, SOON);
  const body = (await c.http('/readiness')).body;
  assert.doesNotMatch(body, /services|endpointslices/, 'Services and EndpointSlices were listed');
});

test('before the first sync: SERVFAIL for cluster names and /readiness 503; then answers', async (t) => {
  const c = await startCluster({
    seed: async (api) => {
      api.upsert('services', clusterIPService('default', 'x', ['10.7.0.1']));
      await api.faults.pause(); // the API server is unreachable when kube-dns starts
    },
  });
  t.after(() => c.stop());
  // kube-dns has tried the API server and failed: the state a slow or absent API server leaves.
  await eventually(async () => assert.ok(((c.dns.sync.stats() as Record<string, { errors?: number }>).services?.errors ?? 0) >= 1), SOON);
  assert.equal(c.dns.sync.synced, false);
  assert.equal((await A(c, `x.default.svc.${Z}`)).rcode, 'SERVFAIL');
  assert.equal((await A(c, `nosuch.default.svc.${Z}`)).rcode, 'SERVFAIL', 'not a wrong NXDOMAIN');
  const ready = await c.http('/readiness');
  assert.equal(ready.status, 503);
  assert.match(ready.body, /waiting/);
  await c.api.faults.resume();
  await waitSynced(c, SOON);
  assert.deepEqual((await A(c, `x.default.svc.${Z}`)).ips, ['10.7.0.1']);
  assert.equal((await c.http('/readiness')).status, 200);
});
