import { test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '@kube-dns/config';
import {
  clusterIPService,
  endpointSlice,
  externalNameService,
  headlessService,
  pod,
  startFakeApiServer,
  type FakeApiServer,
} from '@kube-dns/testkit';
import { KubeSync, type KubeSyncOptions } from '../src/kube/index.js';
import { RecordingZone, waitUntil } from './kube-helpers.js';

type After = { after(fn: () => unknown): void };

async function setup(t: After, opts: Partial<KubeSyncOptions> = {}, serverOpts = {}) {
  const api = await startFakeApiServer(serverOpts);
  t.after(() => api.close());
  const zone = new RecordingZone();
  const sync = new KubeSync({
    kc: api.kubeConfig(),
    zone,
    watchPods: false,
    log: silentLogger(),
    // Quick retries keep the tests short; the schedule itself is tested with a fake clock.
    backoff: { initialMs: 20, maxMs: 200 },
    ...opts,
  });
  t.after(() => sync.stop());
  return { api, zone, sync };
}

async function startSynced(api: FakeApiServer, sync: KubeSync): Promise<void> {
  sync.start();
  await sync.waitForSync(5000);
  await api.waitForWatches('services');
  await api.waitForWatches('endpointslices');
}

test('services and endpointslices added, changed and deleted reach the zone within 1 s', async (t) => {
  const { api, zone, sync } = await setup(t);
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1'], [{ name: 'https', port: 443 }]));
  await startSynced(api, sync);
  assert.equal(zone.services.get('default/kubernetes')?.clusterIPs[0], '10.0.0.1');

  api.upsert('services', clusterIPService('ns', 'web', ['10.0.0.10', 'fd00::10'], [{ name: 'http', port: 80 }]));
  await waitUntil(() => zone.services.has('ns/web'), 'ADDED service');
  assert.deepEqual(zone.services.get('ns/web')?.clusterIPs, ['10.0.0.10', 'fd00::10']);

  api.upsert('services', clusterIPService('ns', 'web', ['10.0.0.11']));
  await waitUntil(() => zone.services.get('ns/web')?.clusterIPs[0] === '10.0.0.11', 'MODIFIED service');

  api.upsert('services', headlessService('ns', 'db', [{ name: 'pg', port: 5432 }]));
  api.upsert('endpointslices', endpointSlice('ns', 'db', 'db-1', 'IPv4', [{ ip: '10.1.0.2', hostname: 'db-0' }, { ip: '10.1.0.3', ready: false }]));
  await waitUntil(() => zone.slices.has('ns/db-1') && zone.services.get('ns/db')?.kind === 'Headless', 'headless service and slice');
  assert.deepEqual(zone.slices.get('ns/db-1')?.endpoints.map((e) => [e.addresses[0], e.hostname, e.ready]), [
    ['10.1.0.2', 'db-0', true],
    ['10.1.0.3', '', false],
  ]);

  api.upsert('endpointslices', endpointSlice('ns', 'db', 'db-1', 'IPv4', [{ ip: '10.1.0.4' }]));
  await waitUntil(() => zone.slices.get('ns/db-1')?.endpoints[0]?.addresses[0] === '10.1.0.4', 'MODIFIED slice');

  api.remove('endpointslices', 'ns', 'db-1');
  api.remove('services', 'ns', 'web');
  await waitUntil(() => !zone.slices.has('ns/db-1') && !zone.services.has('ns/web'), 'DELETED slice and service');

  api.upsert('services', externalNameService('ns', 'ext', 'Example.COM.'));
  await waitUntil(() => zone.services.get('ns/ext')?.externalName === 'example.com', 'ExternalName service');
  assert.equal(sync.stats().services?.objects, 3);
  assert.ok((sync.stats().services?.lastEventAt ?? 0) > 0);
});

test('a slice that loses its service-name label is removed from the zone', async (t) => {
  const { api, zone, sync } = await setup(t);
  await startSynced(api, sync);
  const s = endpointSlice('ns', 'db', 'db-1', 'IPv4', [{ ip: '10.1.0.2' }]);
  api.upsert('endpointslices', s);
  await waitUntil(() => zone.slices.has('ns/db-1'), 'slice');
  delete s.metadata!.labels!['kubernetes.io/service-name'];
  api.upsert('endpointslices', s);
  await waitUntil(() => !zone.slices.has('ns/db-1'), 'slice removal');
});

test('pods are listed and watched only when asked', async (t) => {
  const without = await setup(t);
  without.api.upsert('pods', pod('ns', 'p1', ['10.2.0.1']));
  await startSynced(without.api, without.sync);
  assert.deepEqual(without.sync.resources, ['services', 'endpointslices']);
  assert.equal(without.zone.pods.size, 0);
  assert.equal(without.api.requests.filter((r) => r.resource === 'pods').length, 0);
  assert.equal(without.sync.stats().pods, undefined);

  const withPods = await setup(t, { watchPods: true });
  withPods.api.upsert('pods', pod('ns', 'p1', ['10.2.0.1', 'fd00::2:1']));
  await startSynced(withPods.api, withPods.sync);
  assert.deepEqual(withPods.zone.pods.get('ns/p1')?.ips, ['10.2.0.1', 'fd00::2:1']);
  await withPods.api.waitForWatches('pods');
  withPods.api.remove('pods', 'ns', 'p1');
  await waitUntil(() => !withPods.zone.pods.has('ns/p1'), 'pod deletion');
});

test('synced waits for every resource: a failing endpointslices list holds it back', async (t) => {
  const { api, sync } = await setup(t);
  api.faults.failRequests(3, 503, { resource: 'endpointslices', watch: false });
  let syncedEvents = 0;
  sync.on('synced', () => syncedEvents++);
  sync.start();
  await waitUntil(() => sync.stats().services?.synced === true, 'services listed');
  assert.equal(sync.synced, false);
  await sync.waitForSync(5000);
  assert.equal(sync.stats().endpointslices?.errors, 3);
  assert.equal(api.requests.filter((r) => r.status === 503).length, 3);
  assert.equal(syncedEvents, 1);
});

test('a dropped watch resumes from the last resourceVersion without losing or duplicating events', async (t) => {
  for (const abrupt of [false, true]) {
    const { api, zone, sync } = await setup(t);
    api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
    await startSynced(api, sync);
    api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
    await waitUntil(() => zone.services.has('ns/b'), 'b');
    const rvBefore = String(api.resourceVersion);
    const watchesBefore = api.requests.filter((r) => r.watch && r.resource === 'services').length;

    api.faults.dropWatches({ abrupt, resource: 'services' });
    // These happen while no watch is open: the next watch must replay them.
    api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.3']));
    api.upsert('services', clusterIPService('ns', 'c', ['10.0.0.4']));
    api.remove('services', 'ns', 'b');
    await waitUntil(() => zone.services.get('ns/a')?.clusterIPs[0] === '10.0.0.3' && zone.services.has('ns/c') && !zone.services.has('ns/b'), `replayed events (abrupt=${abrupt})`);

    const rewatch = api.requests.filter((r) => r.watch && r.resource === 'services')[watchesBefore];
    assert.equal(rewatch?.query['resourceVersion'], rvBefore);
    assert.equal(api.requests.filter((r) => !r.watch && r.resource === 'services').length, 1, 'no relist');
    for (const e of ['setService ns/a 10.0.0.1', 'setService ns/b 10.0.0.2', 'setService ns/a 10.0.0.3', 'setService ns/c 10.0.0.4', 'deleteService ns/b']) {
      assert.equal(zone.count(e), 1, e);
    }
    assert.equal(sync.stats().services?.watchRestarts, 1);
    assert.equal(sync.stats().services?.relists, 0);
  }
});

test('compacted history: 410 → relist, and objects deleted while the watch was down leave the zone', async (t) => {
  const { api, zone, sync } = await setup(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  api.upsert('services', headlessService('ns', 'h'));
  api.upsert('endpointslices', endpointSlice('ns', 'h', 'h-1', 'IPv4', [{ ip: '10.1.0.1' }]));
  await startSynced(api, sync);
  assert.equal(zone.services.size, 3);

  await api.faults.pause();
  api.remove('services', 'ns', 'b');
  api.remove('endpointslices', 'ns', 'h-1');
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.9']));
  api.upsert('services', clusterIPService('ns', 'c', ['10.0.0.3']));
  api.faults.compactHistory();
  await api.faults.resume();

  await waitUntil(
    () => !zone.services.has('ns/b') && !zone.slices.has('ns/h-1') && zone.services.has('ns/c') && zone.services.get('ns/a')?.clusterIPs[0] === '10.0.0.9',
    'relist after 410',
    3000,
  );
  const st = sync.stats();
  assert.equal(st.services?.relists, 1);
  assert.equal(st.endpointslices?.relists, 1);
  assert.equal(st.services?.objects, 3);
  assert.equal(zone.count('setService ns/h '), 1, 'unchanged objects are not re-applied on relist');
});

test('500s on list are retried with backoff, then the sync completes', async (t) => {
  const { api, zone, sync } = await setup(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  api.faults.failRequests(4, 500, { resource: 'services', watch: false });
  api.faults.failRequests(2, 500, { resource: 'services', watch: true });
  sync.start();
  await sync.waitForSync(5000);
  assert.ok(zone.services.has('ns/a'));
  await api.waitForWatches('services');
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await waitUntil(() => zone.services.has('ns/b'), 'b after failed watches');
  assert.equal(sync.stats().services?.errors, 6);
});

test('API server down then back: records stay, and changes made meanwhile arrive', async (t) => {
  const { api, zone, sync } = await setup(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  await startSynced(api, sync);
  await api.faults.pause();
  // Several failed reconnects happen while it is down.
  await waitUntil(() => (sync.stats().services?.errors ?? 0) >= 2, 'reconnect attempts', 3000);
  assert.ok(zone.services.has('ns/a'), 'records survive the outage');
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await api.faults.resume();
  await waitUntil(() => zone.services.has('ns/b'), 'change made during the outage', 3000);
  assert.equal(sync.stats().services?.relists, 0, 'resumed from the last RV, no relist');
});

test('lists are paged (limit + continue) and every object arrives', async (t) => {
  const { api, zone, sync } = await setup(t, { pageSize: 100 });
  for (let i = 0; i < 250; i++) api.upsert('services', clusterIPService(`ns${i % 7}`, `svc-${i}`, [`10.0.${i >> 8}.${i & 255}`]));
  await startSynced(api, sync);
  assert.equal(zone.services.size, 250);
  const lists = api.requests.filter((r) => r.resource === 'services' && !r.watch);
  assert.equal(lists.length, 3);
  assert.ok(lists.every((r) => r.query['limit'] === '100'));
  assert.equal(lists[0]?.query['continue'], undefined);
  assert.ok(lists[1]?.query['continue'] && lists[2]?.query['continue']);
  const watch = api.requests.find((r) => r.resource === 'services' && r.watch);
  assert.equal(watch?.query['allowWatchBookmarks'], 'true');
  assert.ok(Number(watch?.query['timeoutSeconds']) >= 300);
});

test('stop() aborts a pending retry wait and the open watches', async (t) => {
  const { api, sync } = await setup(t, { backoff: { initialMs: 60_000, maxMs: 60_000 } });
  await startSynced(api, sync);
  assert.equal(api.activeWatches(), 2);
  const requests = api.requests.length;
  api.faults.dropWatches();
  // A watch that ended at once counts as a failure: both reflectors now wait 60 s to re-watch.
  await waitUntil(() => api.activeWatches() === 0, 'watches dropped');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(api.requests.length, requests, 'no re-watch yet');
  const t0 = Date.now();
  await sync.stop();
  assert.ok(Date.now() - t0 < 1000);

  const s2 = await setup(t);
  await startSynced(s2.api, s2.sync);
  await s2.sync.stop();
  await waitUntil(() => s2.api.activeWatches() === 0, 'watches closed by stop()');
});
