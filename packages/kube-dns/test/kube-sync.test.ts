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
import { serviceDep, Zone } from '../src/records/zone.js';
import { resolve } from '../src/resolve/resolve.js';
import type { ResolveOptions } from '../src/resolve/types.js';
import { waitUntil } from './kube-helpers.js';

// The list/watch machinery feeding the real zone; every check is what DNS would answer from it.
const OPTS: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'verified', serial: 1 };

/** What the zone answers for `name` (relative to cluster.local): the record data, or the rcode. */
function ask(zone: Zone, name: string, type = 'A'): string[] | string {
  const r = resolve(zone, `${name}.cluster.local`, type, OPTS);
  if (r.rcode !== 'NOERROR') return r.rcode;
  return r.answers.map((a) => {
    const d = (a as { data: unknown }).data;
    return typeof d === 'object' && d !== null ? JSON.stringify(d) : String(d);
  });
}

/** A generous deadline: these waits end on the event, the deadline only stops a broken run. */
const SOON = 15_000;
const until = (cond: () => boolean, what: string) => waitUntil(cond, what, SOON);
const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

type After = { after(fn: () => unknown): void };

async function setup(t: After, opts: Partial<KubeSyncOptions> = {}, serverOpts = {}) {
  const api = await startFakeApiServer(serverOpts);
  t.after(() => api.close());
  const zone = new Zone();
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
  await sync.waitForSync(SOON);
  await api.waitForWatches('services');
  await api.waitForWatches('endpointslices');
}

test('services and endpointslices added, changed and deleted reach the zone', async (t) => {
  const { api, zone, sync } = await setup(t);
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1'], [{ name: 'https', port: 443 }]));
  await startSynced(api, sync);
  assert.deepEqual(ask(zone, 'kubernetes.default.svc'), ['10.0.0.1']);

  api.upsert('services', clusterIPService('ns', 'web', ['10.0.0.10', 'fd00::10'], [{ name: 'http', port: 80 }]));
  await until(() => same(ask(zone, 'web.ns.svc'), ['10.0.0.10']), 'ADDED service');
  assert.deepEqual(ask(zone, 'web.ns.svc', 'AAAA'), ['fd00::10']);
  assert.deepEqual(ask(zone, '_http._tcp.web.ns.svc', 'SRV'), [JSON.stringify({ priority: 10, weight: 100, port: 80, target: 'web.ns.svc.cluster.local' })]);

  api.upsert('services', clusterIPService('ns', 'web', ['10.0.0.11']));
  await until(() => same(ask(zone, 'web.ns.svc'), ['10.0.0.11']), 'MODIFIED service');
  assert.equal(ask(zone, 'web.ns.svc', 'AAAA').length, 0, 'the IPv6 address went with the change');

  api.upsert('services', headlessService('ns', 'db', [{ name: 'pg', port: 5432 }]));
  api.upsert('endpointslices', endpointSlice('ns', 'db', 'db-1', 'IPv4', [{ ip: '10.1.0.2', hostname: 'db-0' }, { ip: '10.1.0.3', ready: false }]));
  await until(() => same(ask(zone, 'db.ns.svc'), ['10.1.0.2']), 'headless service and slice (the not-ready address left out)');
  assert.deepEqual(ask(zone, 'db-0.db.ns.svc'), ['10.1.0.2']);

  api.upsert('endpointslices', endpointSlice('ns', 'db', 'db-1', 'IPv4', [{ ip: '10.1.0.4' }]));
  await until(() => same(ask(zone, 'db.ns.svc'), ['10.1.0.4']), 'MODIFIED slice');
  assert.equal(ask(zone, 'db-0.db.ns.svc'), 'NXDOMAIN');

  api.remove('endpointslices', 'ns', 'db-1');
  api.remove('services', 'ns', 'web');
  await until(() => ask(zone, 'db.ns.svc') === 'NXDOMAIN' && ask(zone, 'web.ns.svc') === 'NXDOMAIN', 'DELETED slice and service');

  api.upsert('services', externalNameService('ns', 'ext', 'Example.COM.'));
  await until(() => same(ask(zone, 'ext.ns.svc', 'CNAME'), ['example.com']), 'ExternalName service');
  assert.equal(sync.stats().services?.objects, 3);
  assert.ok((sync.stats().services?.lastEventAt ?? 0) > 0);
});

test('a slice that loses its service-name label is removed from the zone', async (t) => {
  const { api, zone, sync } = await setup(t);
  await startSynced(api, sync);
  const s = endpointSlice('ns', 'db', 'db-1', 'IPv4', [{ ip: '10.1.0.2' }]);
  api.upsert('services', headlessService('ns', 'db'));
  api.upsert('endpointslices', s);
  await until(() => same(ask(zone, 'db.ns.svc'), ['10.1.0.2']), 'slice');
  delete s.metadata!.labels!['kubernetes.io/service-name'];
  api.upsert('endpointslices', s);
  await until(() => ask(zone, 'db.ns.svc') === 'NXDOMAIN', 'slice removal');
  assert.equal(zone.stats().endpointSlices, 0);
});

test('pods are listed and watched only when asked', async (t) => {
  const without = await setup(t);
  without.api.upsert('pods', pod('ns', 'p1', ['10.2.0.1']));
  await startSynced(without.api, without.sync);
  assert.deepEqual(without.sync.resources, ['services', 'endpointslices']);
  assert.equal(ask(without.zone, '10-2-0-1.ns.pod'), 'NXDOMAIN', 'no pod known: a verified pod name does not exist');
  assert.equal(without.api.requests.filter((r) => r.resource === 'pods').length, 0);
  assert.equal(without.sync.stats().pods, undefined);

  const withPods = await setup(t, { watchPods: true });
  withPods.api.upsert('pods', pod('ns', 'p1', ['10.2.0.1', 'fd00::2:1']));
  await startSynced(withPods.api, withPods.sync);
  assert.deepEqual(ask(withPods.zone, '10-2-0-1.ns.pod'), ['10.2.0.1']);
  assert.deepEqual(ask(withPods.zone, 'fd00--2-1.ns.pod', 'AAAA'), ['fd00::2:1']);
  await withPods.api.waitForWatches('pods');
  withPods.api.remove('pods', 'ns', 'p1');
  await until(() => ask(withPods.zone, '10-2-0-1.ns.pod') === 'NXDOMAIN', 'pod deletion');
});

test('synced waits for every resource: a failing endpointslices list holds it back', async (t) => {
  // Retries 300 ms then 600 ms apart: seconds during which only the services are listed.
  const { api, sync } = await setup(t, { backoff: { initialMs: 300, maxMs: 2000 } });
  api.faults.failRequests(3, 503, { resource: 'endpointslices', watch: false });
  let syncedEvents = 0;
  sync.on('synced', () => syncedEvents++);
  sync.start();
  await until(() => sync.stats().services?.synced === true, 'services listed');
  assert.equal(sync.synced, false);
  await sync.waitForSync(SOON);
  assert.equal(sync.stats().endpointslices?.errors, 3);
  assert.equal(api.requests.filter((r) => r.status === 503).length, 3);
  assert.equal(syncedEvents, 1);
});

test('a dropped watch resumes from the last resourceVersion: changes made while no watch was open all arrive, without a relist', async (t) => {
  for (const abrupt of [false, true]) {
    const { api, zone, sync } = await setup(t);
    api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
    await startSynced(api, sync);
    api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
    await until(() => same(ask(zone, 'b.ns.svc'), ['10.0.0.2']), 'b');
    const rvBefore = String(api.resourceVersion);
    const watchesBefore = api.requests.filter((r) => r.watch && r.resource === 'services').length;
    const genBefore = zone.generation;

    api.faults.dropWatches({ abrupt, resource: 'services' });
    // These happen while no watch is open: the next watch must replay them.
    api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.3']));
    api.upsert('services', clusterIPService('ns', 'c', ['10.0.0.4']));
    api.remove('services', 'ns', 'b');
    await until(
      () => same(ask(zone, 'a.ns.svc'), ['10.0.0.3']) && same(ask(zone, 'c.ns.svc'), ['10.0.0.4']) && ask(zone, 'b.ns.svc') === 'NXDOMAIN',
      `replayed events (abrupt=${abrupt})`,
    );

    const rewatch = api.requests.filter((r) => r.watch && r.resource === 'services')[watchesBefore];
    assert.equal(rewatch?.query['resourceVersion'], rvBefore, 'the new watch starts where the old one ended');
    assert.equal(api.requests.filter((r) => !r.watch && r.resource === 'services').length, 1, 'no relist');
    assert.equal(zone.generation - genBefore, 3, 'exactly the three changes were applied');
    assert.equal(sync.stats().services?.watchRestarts, 1);
    assert.equal(sync.stats().services?.relists, 0);
  }
});

test('compacted history: 410 → relist, and objects deleted while the watch was down leave the zone', async (t) => {
  const { api, zone, sync } = await setup(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  api.upsert('services', headlessService('ns', 'h'));
  api.upsert('services', clusterIPService('ns', 'keep', ['10.0.0.5']));
  api.upsert('endpointslices', endpointSlice('ns', 'h', 'h-1', 'IPv4', [{ ip: '10.1.0.1' }]));
  await startSynced(api, sync);
  assert.equal(zone.stats().services, 4);
  const keepGen = zone.depGeneration(serviceDep('ns', 'keep'));

  await api.faults.pause();
  api.remove('services', 'ns', 'b');
  api.remove('endpointslices', 'ns', 'h-1');
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.9']));
  api.upsert('services', clusterIPService('ns', 'c', ['10.0.0.3']));
  api.faults.compactHistory();
  await api.faults.resume();

  await until(
    () =>
      ask(zone, 'b.ns.svc') === 'NXDOMAIN' &&
      ask(zone, 'h.ns.svc') === 'NXDOMAIN' &&
      same(ask(zone, 'c.ns.svc'), ['10.0.0.3']) &&
      same(ask(zone, 'a.ns.svc'), ['10.0.0.9']),
    'relist after 410',
  );
  const st = sync.stats();
  assert.equal(st.services?.relists, 1);
  assert.equal(st.endpointslices?.relists, 1);
  assert.equal(st.services?.objects, 4);
  // A relist must not invalidate what did not change: cached answers for it stay valid.
  assert.equal(zone.depGeneration(serviceDep('ns', 'keep')), keepGen, 'an unchanged service keeps its generation across the relist');
  assert.deepEqual(ask(zone, 'keep.ns.svc'), ['10.0.0.5']);
});

test('500s on list are retried with backoff, then the sync completes', async (t) => {
  const { api, zone, sync } = await setup(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  api.faults.failRequests(4, 500, { resource: 'services', watch: false });
  api.faults.failRequests(2, 500, { resource: 'services', watch: true });
  sync.start();
  await sync.waitForSync(SOON);
  assert.deepEqual(ask(zone, 'a.ns.svc'), ['10.0.0.1']);
  await api.waitForWatches('services');
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await until(() => same(ask(zone, 'b.ns.svc'), ['10.0.0.2']), 'b after failed watches');
  assert.equal(sync.stats().services?.errors, 6);
});

test('API server down then back: records stay, and changes made meanwhile arrive', async (t) => {
  const { api, zone, sync } = await setup(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  await startSynced(api, sync);
  await api.faults.pause();
  // Several failed reconnects happen while it is down.
  await until(() => (sync.stats().services?.errors ?? 0) >= 2, 'reconnect attempts');
  assert.deepEqual(ask(zone, 'a.ns.svc'), ['10.0.0.1'], 'records survive the outage');
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await api.faults.resume();
  await until(() => same(ask(zone, 'b.ns.svc'), ['10.0.0.2']), 'change made during the outage');
  assert.equal(sync.stats().services?.relists, 0, 'resumed from the last RV, no relist');
});

test('lists are paged (limit + continue) and every object arrives', async (t) => {
  const { api, zone, sync } = await setup(t, { pageSize: 100 });
  for (let i = 0; i < 250; i++) api.upsert('services', clusterIPService(`ns${i % 7}`, `svc-${i}`, [`10.0.${i >> 8}.${i & 255}`]));
  await startSynced(api, sync);
  assert.equal(zone.stats().services, 250);
  for (let i = 0; i < 250; i += 37) assert.deepEqual(ask(zone, `svc-${i}.ns${i % 7}.svc`), [`10.0.${i >> 8}.${i & 255}`]);
  const lists = api.requests.filter((r) => r.resource === 'services' && !r.watch);
  assert.equal(lists.length, 3);
  assert.ok(lists.every((r) => r.query['limit'] === '100'));
  assert.equal(lists[0]?.query['continue'], undefined);
  assert.ok(lists[1]?.query['continue'] && lists[2]?.query['continue']);
  const watch = api.requests.find((r) => r.resource === 'services' && r.watch);
  assert.equal(watch?.query['allowWatchBookmarks'], 'true');
  assert.ok(Number(watch?.query['timeoutSeconds']) >= 300);

  // The default page: 500 objects (the README's figure, client-go's pager).
  const d = await setup(t);
  for (let i = 0; i < 1001; i++) d.api.upsert('services', clusterIPService('ns', `svc-${i}`, [`10.1.${i >> 8}.${i & 255}`]));
  await startSynced(d.api, d.sync);
  assert.equal(d.zone.stats().services, 1001);
  const pages = d.api.requests.filter((r) => r.resource === 'services' && !r.watch);
  assert.deepEqual(pages.map((r) => r.query['limit']), ['500', '500', '500']);
});

test('stop() aborts a pending retry wait and the open watches', async (t) => {
  const { api, sync } = await setup(t, { backoff: { initialMs: 60_000, maxMs: 60_000 } });
  await startSynced(api, sync);
  assert.equal(api.activeWatches(), 2);
  const requests = api.requests.length;
  api.faults.dropWatches();
  // A watch that ended at once counts as a failure: both reflectors now wait 60 s to re-watch.
  await until(() => api.activeWatches() === 0, 'watches dropped');
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(api.requests.length, requests, 'no re-watch yet');
  const t0 = Date.now();
  await sync.stop();
  assert.ok(Date.now() - t0 < 30_000, 'stop() did not sit out the 60 s backoff');

  const s2 = await setup(t);
  await startSynced(s2.api, s2.sync);
  await s2.sync.stop();
  await until(() => s2.api.activeWatches() === 0, 'watches closed by stop()');
});

test('a bookmark is the API server heard from: lastHeardAt moves, lastEventAt (no object changed) does not', async (t) => {
  const { api, sync } = await setup(t);
  await startSynced(api, sync);
  const listed = sync.stats().services!;
  assert.equal(listed.lastHeardAt, listed.lastSyncAt, 'the list is the first thing heard');
  await new Promise((r) => setTimeout(r, 20));
  api.faults.bookmark();
  await until(() => (sync.stats().services?.lastHeardAt ?? 0) > listed.lastHeardAt!, 'the bookmark heard');
  assert.equal(sync.stats().services!.lastEventAt, listed.lastEventAt, 'no watch event of an object');
});
