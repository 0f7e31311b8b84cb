// API server faults, each against the fake API server: what a user of the DNS would notice is
// that records keep being served and that changes arrive again within a stated bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger } from '@kube-dns/config';
import { clusterIPService, startFakeApiServer, tempDir, type FakeApiServer } from '@kube-dns/testkit';
import { KubeSync, loadKubeConfig, type KubeSyncOptions } from '../src/kube/index.js';
import { RecordingZone, waitUntil } from './kube-helpers.js';
import { eventually, startCluster, waitSynced } from './integration-helpers.js';

type After = { after(fn: () => unknown): void };

async function syncWith(t: After, api: FakeApiServer, opts: Partial<KubeSyncOptions> = {}) {
  const zone = new RecordingZone();
  const sync = new KubeSync({ kc: api.kubeConfig(), zone, watchPods: false, log: silentLogger(), backoff: { initialMs: 20, maxMs: 200 }, ...opts });
  t.after(() => sync.stop());
  sync.start();
  await sync.waitForSync(20_000);
  await api.waitForWatches('services');
  await api.waitForWatches('endpointslices');
  return { zone, sync };
}

async function fakeApi(t: After, opts: Parameters<typeof startFakeApiServer>[0] = {}): Promise<FakeApiServer> {
  const api = await startFakeApiServer(opts);
  t.after(() => api.close());
  return api;
}

test('429 Too Many Requests with Retry-After: the next list waits that long, not the 20 ms backoff', async (t) => {
  const api = await fakeApi(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  api.faults.failRequests(1, 429, { resource: 'services', watch: false }, 2);
  const { zone } = await syncWith(t, api);
  assert.ok(zone.services.has('ns/a'));
  const lists = api.requests.filter((r) => r.resource === 'services' && !r.watch);
  assert.deepEqual(lists.map((r) => r.status), [429, 200]);
  const waited = lists[1]!.at - lists[0]!.at;
  assert.ok(waited >= 1900 && waited < 15_000, `retried after ${waited} ms (Retry-After: 2 s)`);
  t.diagnostic(`Retry-After 2 s honoured: retried after ${waited} ms`);
});

test('watches throttled (429, 503): re-watched from the same resourceVersion after at least 1 s each, never a relist', async (t) => {
  // API Priority & Fairness rejecting watches of a busy cluster: a relist would add to the load
  const api = await fakeApi(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const { zone, sync } = await syncWith(t, api);
  const rv = sync.stats().services?.resourceVersion;
  api.requests.length = 0;
  api.faults.failRequests(2, 429, { resource: 'services', watch: true }, 1);
  api.faults.failRequests(1, 503, { resource: 'services', watch: true });
  api.faults.dropWatches({ resource: 'services' });
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await waitUntil(() => zone.services.has('ns/b'), 'the change made while watches were throttled', 15_000);
  const svc = api.requests.filter((r) => r.resource === 'services');
  assert.deepEqual(
    svc.map((r) => [r.watch ? 'watch' : 'list', r.status, r.query['resourceVersion']]),
    [
      ['watch', 429, rv],
      ['watch', 429, rv],
      ['watch', 503, rv],
      ['watch', 200, rv],
    ],
  );
  const gaps = svc.slice(1).map((r, i) => r.at - svc[i]!.at);
  assert.ok(gaps.every((g) => g >= 950), `re-watched after ${gaps.join(', ')} ms (floor 1 s)`);
  assert.equal(sync.stats().services?.relists, 0);
});

test('500s on list and watch: retried with backoff, the sync completes and the watch resumes', async (t) => {
  const api = await fakeApi(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  api.faults.failRequests(5, 500, { resource: 'services', watch: false });
  const { zone, sync } = await syncWith(t, api);
  api.faults.failRequests(3, 500, { resource: 'services', watch: true });
  api.faults.dropWatches({ resource: 'services' });
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await waitUntil(() => zone.services.has('ns/b'), 'the change made while watches failed', 15_000);
  // two refused watches in a row relist (that brought b); the third is refused after it
  await waitUntil(() => sync.stats().services?.errors === 8, 'every injected failure met', 15_000);
  assert.ok((sync.stats().services?.relists ?? 0) >= 1, 'a relist after two refused watches');
});

test('a paged list that always outlasts its continue token: one unpaged list, kube-dns gets ready and watches', async (t) => {
  // a big cluster whose paged list takes longer than etcd keeps the snapshot (compaction, 5 min)
  const api = await fakeApi(t);
  for (let i = 0; i < 30; i++) api.upsert('services', clusterIPService('ns', `s${i}`, [`10.0.1.${i}`]));
  api.faults.failRequests(1_000_000, 410, { resource: 'services', continue: true });
  const zone = new RecordingZone();
  const sync = new KubeSync({ kc: api.kubeConfig(), zone, watchPods: false, log: silentLogger(), backoff: { initialMs: 20, maxMs: 200 }, pageSize: 10 });
  t.after(() => sync.stop());
  sync.start();
  await sync.waitForSync(5000);
  assert.equal(zone.services.size, 30);
  const lists = api.requests.filter((r) => r.resource === 'services' && !r.watch);
  assert.deepEqual(lists.map((r) => [r.status, r.query['continue'] ? 'next' : Number(r.query['limit'] ?? 0) > 0 ? 'first' : 'all']), [
    [200, 'first'],
    [410, 'next'],
    [200, 'all'],
  ]);
  await api.waitForWatches('services');
  api.upsert('services', clusterIPService('ns', 'new', ['10.0.2.1']));
  await waitUntil(() => zone.services.has('ns/new'), 'a change through the watch', 5000);
  assert.equal(sync.stats().services?.relists, 0);
});

test('a watch that stays open and sends nothing is abandoned after watchIdleMs and the resource relisted', async (t) => {
  const api = await fakeApi(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const IDLE = 1000;
  const { zone, sync } = await syncWith(t, api, { watchIdleMs: IDLE });
  assert.equal(api.faults.stallWatches(), 2);
  const stalledAt = Date.now();
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await waitUntil(() => zone.services.has('ns/b'), 'the change hidden by the stalled watch', IDLE * 20);
  const took = Date.now() - stalledAt;
  assert.ok(took >= IDLE - 50, `not before the idle bound (${took} ms)`);
  assert.equal(sync.stats().services?.relists, 1, 'relisted');
  t.diagnostic(`stalled watch detected and the change applied after ${took} ms (bound ${IDLE} ms + one list)`);
});

test('an API server that accepts a list or a watch and never answers: both given up within their bounds, and the sync goes on', async (t) => {
  const api = await fakeApi(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  api.faults.hangRequests(1, { resource: 'services', watch: false });
  api.faults.hangRequests(1, { resource: 'services', watch: true });
  const started = Date.now();
  // syncWith returns once a watch is open: after the hung list and the hung watch
  const { zone, sync } = await syncWith(t, api, { listTimeoutMs: 500, watchIdleMs: 500 });
  t.diagnostic(`watching ${Date.now() - started} ms after a hung list and a hung watch`);
  assert.ok(zone.services.has('ns/a'));
  assert.equal(sync.stats().services?.errors, 2);
  assert.match(sync.stats().services?.lastError ?? '', /no event or bookmark for 500 ms/);
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await waitUntil(() => zone.services.has('ns/b'), 'a change through the new watch', 5000);
});

test('a quiet but healthy watch (bookmarks only) is not mistaken for a stalled one', async (t) => {
  const api = await fakeApi(t, { bookmarkIntervalMs: 200 });
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const { sync } = await syncWith(t, api, { watchIdleMs: 1000 });
  await new Promise((r) => setTimeout(r, 2500));
  assert.equal(sync.stats().services?.relists, 0);
  assert.equal(sync.stats().services?.watchRestarts, 0);
});

test('410 Gone on the watch request itself: relist, and deletions made meanwhile are applied', async (t) => {
  const api = await fakeApi(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  api.upsert('services', clusterIPService('ns', 'gone', ['10.0.0.9']));
  const { zone, sync } = await syncWith(t, api);
  api.faults.failRequests(1, 410, { resource: 'services', watch: true });
  api.faults.dropWatches({ resource: 'services', abrupt: true });
  api.remove('services', 'ns', 'gone');
  await waitUntil(() => !zone.services.has('ns/gone'), 'the deletion', 15_000);
  assert.ok(zone.services.has('ns/a'));
  assert.ok((sync.stats().services?.relists ?? 0) >= 1);
});

test('API server back after an outage with its history gone (a restart): the 410 is followed by a relist at once, not another ceiling-long wait', async (t) => {
  // A restarted kube-apiserver's watch cache starts anew: the first watch from the old
  // resourceVersion gets 410. The backoff is at its ceiling from the outage; waiting it once more
  // before the relist doubled the time records stayed stale after the server was back.
  const MAX = 2000;
  const api = await fakeApi(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const { zone } = await syncWith(t, api, { backoff: { initialMs: 100, maxMs: MAX } });
  await api.faults.pause();
  await new Promise((r) => setTimeout(r, 5000)); // 100, 200, ... the ceiling reached
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  api.faults.compactHistory();
  api.requests.length = 0;
  await api.faults.resume();
  await waitUntil(() => zone.services.has('ns/b'), 'the change made during the outage', 4 * MAX);
  const svc = api.requests.filter((r) => r.resource === 'services');
  const gone = svc.findIndex((r) => r.watch);
  const list = svc.findIndex((r, i) => i > gone && !r.watch);
  assert.ok(gone >= 0 && list > gone, 'a watch (410), then a list');
  const waited = svc[list]!.at - svc[gone]!.at;
  assert.ok(waited < MAX / 4, `relisted ${waited} ms after the 410 (the backoff's ceiling is ${MAX} ms)`);
  t.diagnostic(`relisted ${waited} ms after the 410`);
});

test('410 on every watch right after its list: relists back off (no list loop)', async (t) => {
  const api = await fakeApi(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  await syncWith(t, api, { backoff: { initialMs: 300, maxMs: 5000 } });
  api.requests.length = 0;
  api.faults.failRequests(3, 410, { resource: 'services', watch: true });
  api.faults.dropWatches({ resource: 'services' });
  await api.waitForWatches('services');
  await waitUntil(() => api.requests.filter((r) => r.resource === 'services' && r.watch && r.status === 200).length >= 1, 'a watch accepted again', 10_000);
  const lists = api.requests.filter((r) => r.resource === 'services' && !r.watch).map((r) => r.at);
  assert.equal(lists.length, 3, 'one relist per 410');
  // the 410 on a watch resumed from the last resourceVersion relists at once; a 410 right after
  // a fresh list means the list cannot keep up, and the next one waits the backoff
  assert.ok(lists[1]! - lists[0]! >= 300 * 0.8 - 20, `second relist after ${lists[1]! - lists[0]!} ms`);
  assert.ok(lists[2]! - lists[1]! >= 600 * 0.8 - 20, `third relist after ${lists[2]! - lists[1]!} ms`);
});

test('outage much longer than the maximum backoff: last records served and ready throughout, resync after', async (t) => {
  // The production ceiling is 30 s; here it is 300 ms and the outage 4 s, i.e. more than ten
  // retries at the ceiling, the same regime as a 10-minute outage with the real schedule.
  const c = await startCluster({
    kubeSync: { backoff: { initialMs: 50, maxMs: 300 } },
    seed: (api) => {
      api.upsert('services', clusterIPService('default', 'web', ['10.0.0.80']));
      api.upsert('services', clusterIPService('default', 'old', ['10.0.0.81']));
    },
  });
  t.after(() => c.stop());
  await waitSynced(c);
  await c.api.waitForWatches('services');
  await c.api.faults.pause();
  const until = Date.now() + 4000;
  let asked = 0;
  while (Date.now() < until) {
    const r = await c.ask('web.default.svc.cluster.local', 'A');
    assert.equal(r.packet.rcode, 'NOERROR', 'served from the last state during the outage');
    assert.equal((await c.http('/readiness')).status, 200, 'still ready during the outage');
    asked++;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok((c.dns.sync.stats().services?.errors ?? 0) >= 5, 'kept retrying');
  // changes made while it was down
  c.api.upsert('services', clusterIPService('default', 'new', ['10.0.0.82']));
  c.api.remove('services', 'default', 'old');
  await c.api.faults.resume();
  const took = await eventually(async () => {
    assert.equal((await c.ask('new.default.svc.cluster.local', 'A')).packet.rcode, 'NOERROR');
    assert.equal((await c.ask('old.default.svc.cluster.local', 'A')).packet.rcode, 'NXDOMAIN');
  }, 20_000, 50);
  t.diagnostic(`${asked} queries answered during a 4 s outage; resynced ${took} ms after the API server came back (max backoff 300 ms)`);
});

async function inClusterSa(t: After, api: FakeApiServer) {
  const root = await tempDir('kube-dns-sa-');
  t.after(root.cleanup);
  const sa = join(root.path, 'var/run/secrets/kubernetes.io/serviceaccount');
  await mkdir(sa, { recursive: true });
  // as the kubelet does: write aside, then rename over (readers never see half a file)
  const put = async (name: string, text: string) => {
    await writeFile(join(sa, `.${name}.tmp`), text);
    await rename(join(sa, `.${name}.tmp`), join(sa, name));
  };
  await put('token', api.token);
  await put('ca.crt', api.caPem!);
  const kc = loadKubeConfig({ env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(api.port) }, inClusterRoot: root.path });
  return { kc, put };
}

test('service-account token rotated (old one rejected at once): the new token is used without a restart', async (t) => {
  const api = await fakeApi(t, { tls: true });
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const { kc, put } = await inClusterSa(t, api);
  const zone = new RecordingZone();
  const sync = new KubeSync({ kc, zone, watchPods: false, log: silentLogger(), backoff: { initialMs: 20, maxMs: 200 } });
  t.after(() => sync.stop());
  sync.start();
  await sync.waitForSync(20_000);
  assert.ok(zone.services.has('ns/a'));

  await put('token', 'rotated-token');
  api.faults.rotateToken('rotated-token');
  api.faults.dropWatches({ abrupt: true });
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  const rotatedAt = Date.now();
  // client-node's own provider would keep the old token for up to 60 s: well before that
  await waitUntil(() => zone.services.has('ns/b'), 'a change after the rotation', 30_000);
  // a request prepared just before the rotation may still carry the old token (and get 401);
  // what follows carries the new one
  const services = api.requests.filter((r) => r.resource === 'services');
  assert.equal(services.at(-1)?.token, 'rotated-token');
  assert.notEqual(services.at(-1)?.status, 401);
  assert.ok(api.requests.filter((r) => r.at >= rotatedAt && r.status === 401).length <= 4, 'no run of 401s');
  t.diagnostic(`new token in use ${Date.now() - rotatedAt} ms after the rotation`);
});

test('CA bundle replaced with the API server certificate: new connections verify against the new CA', async (t) => {
  const api = await fakeApi(t, { tls: true });
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const { kc, put } = await inClusterSa(t, api);
  const zone = new RecordingZone();
  const sync = new KubeSync({ kc, zone, watchPods: false, log: silentLogger(), backoff: { initialMs: 20, maxMs: 200 } });
  t.after(() => sync.stop());
  sync.start();
  await sync.waitForSync(20_000);
  const oldCa = api.caPem!;
  const newCa = await api.faults.rotateCertificate();
  assert.notEqual(newCa, oldCa);
  // the bundle during a CA rotation holds both
  await put('ca.crt', `${oldCa}${newCa}`);
  api.faults.dropWatches({ abrupt: true });
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await waitUntil(() => zone.services.has('ns/b'), 'a change served under the new certificate', 15_000);
  // and with only the new CA left
  await put('ca.crt', newCa);
  api.faults.dropWatches({ abrupt: true });
  api.upsert('services', clusterIPService('ns', 'c', ['10.0.0.3']));
  await waitUntil(() => zone.services.has('ns/c'), 'a change with only the new CA', 15_000);
});

test('stop() right as the first list completes does not hang (no watch is started after it)', async (t) => {
  const api = await fakeApi(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const sync = new KubeSync({ kc: api.kubeConfig(), zone: new RecordingZone(), watchPods: false, log: silentLogger() });
  const stopped = new Promise<number>((resolve) =>
    sync.once('synced', () => {
      const t0 = Date.now();
      void sync.stop().then(() => resolve(Date.now() - t0));
    }),
  );
  sync.start();
  const ms = await Promise.race([stopped, new Promise<number>((r) => setTimeout(() => r(Infinity), 5000))]);
  assert.ok(ms < 2000, `stop() took ${ms} ms`);
  assert.equal(api.activeWatches(), 0);
});
