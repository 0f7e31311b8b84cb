import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api, DiscoveryV1Api, makeInformer, Watch, type V1Service } from '@kubernetes/client-node';
import {
  clusterIPService,
  endpointSlice,
  headlessService,
  pod,
  startFakeApiServer,
  type FakeApiServer,
} from '../src/index.js';

async function server(t: { after(fn: () => unknown): void }, opts = {}): Promise<FakeApiServer> {
  const api = await startFakeApiServer(opts);
  t.after(() => api.close());
  return api;
}

interface WatchEvent {
  type: string;
  object: { metadata?: { name?: string; resourceVersion?: string }; code?: number; reason?: string };
}

/** Opens a client-node watch and collects its events until `done`. */
async function openWatch(api: FakeApiServer, path: string, params: Record<string, string | number | boolean | undefined>) {
  const events: WatchEvent[] = [];
  let doneErr: unknown = 'not done';
  let onEvent = (): void => {};
  const done = new Promise<unknown>((resolve) => {
    void new Watch(api.kubeConfig())
      .watch(
        path,
        params,
        (type, object) => {
          events.push({ type, object });
          onEvent();
        },
        (err) => {
          doneErr = err;
          resolve(err);
        },
      )
      .then((ctl) => cleanup.push(() => ctl.abort()));
  });
  const cleanup: (() => void)[] = [];
  const until = (n: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`only ${events.length} events: ${JSON.stringify(events)}`)), 3000);
      onEvent = () => {
        if (events.length >= n) {
          clearTimeout(timer);
          resolve();
        }
      };
      onEvent();
    });
  return { events, done, until, doneErr: () => doneErr, abort: () => cleanup.forEach((f) => f()) };
}

test('client-node lists services, endpointslices and pods with metadata filled in by the server', async (t) => {
  const api = await server(t);
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1'], [{ name: 'https', port: 443 }]));
  api.upsert('services', headlessService('ns1', 'db'));
  api.upsert('endpointslices', endpointSlice('ns1', 'db', 'db-abc', 'IPv4', [{ ip: '10.1.0.2', hostname: 'db-0' }]));
  api.upsert('pods', pod('ns1', 'db-0', ['10.1.0.2']));
  const kc = api.kubeConfig();

  const svcs = await kc.makeApiClient(CoreV1Api).listServiceForAllNamespaces();
  assert.deepEqual(svcs.items.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`), ['default/kubernetes', 'ns1/db']);
  assert.equal(svcs.metadata?.resourceVersion, String(api.resourceVersion));
  const k = svcs.items[0]!;
  assert.equal(k.spec?.clusterIP, '10.0.0.1');
  assert.match(k.metadata?.uid ?? '', /^[0-9a-f-]{36}$/);
  assert.ok(k.metadata?.creationTimestamp instanceof Date);
  assert.ok(Number(k.metadata?.resourceVersion) > 0);

  const nsOnly = await kc.makeApiClient(CoreV1Api).listNamespacedService({ namespace: 'ns1' });
  assert.deepEqual(nsOnly.items.map((s) => s.metadata?.name), ['db']);
  const slices = await kc.makeApiClient(DiscoveryV1Api).listEndpointSliceForAllNamespaces();
  assert.equal(slices.items[0]?.endpoints[0]?.hostname, 'db-0');
  const pods = await kc.makeApiClient(CoreV1Api).listPodForAllNamespaces();
  assert.deepEqual(pods.items[0]?.status?.podIPs?.map((p) => p.ip), ['10.1.0.2']);

  api.upsert('configmaps', { metadata: { namespace: 'kube-system', name: 'kube-dns' }, data: { upstreamNameservers: '["1.1.1.1"]' } });
  const cm = await kc.makeApiClient(CoreV1Api).readNamespacedConfigMap({ namespace: 'kube-system', name: 'kube-dns' });
  assert.equal(cm.data?.['upstreamNameservers'], '["1.1.1.1"]');

  const one = await kc.makeApiClient(CoreV1Api).readNamespacedService({ namespace: 'ns1', name: 'db' });
  assert.equal(one.spec?.clusterIP, 'None');
  await assert.rejects(kc.makeApiClient(CoreV1Api).readNamespacedService({ namespace: 'ns1', name: 'nope' }), (e: { code?: number }) => e.code === 404);
});

test('requests without the bearer token get 401 with a Status body', async (t) => {
  const api = await server(t);
  const res = await fetch(`${api.url}/api/v1/services`);
  assert.equal(res.status, 401);
  assert.deepEqual(await res.json(), {
    kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401,
  });
  const bad = await fetch(`${api.url}/api/v1/services`, { headers: { authorization: 'Bearer wrong' } });
  assert.equal(bad.status, 401);
});

test('limit + continue pages through a consistent snapshot; an expired token is 410', async (t) => {
  const api = await server(t);
  for (let i = 0; i < 7; i++) api.upsert('services', clusterIPService('ns', `s${i}`, [`10.0.0.${i + 1}`]));
  const core = api.kubeConfig().makeApiClient(CoreV1Api);

  const p1 = await core.listServiceForAllNamespaces({ limit: 3 });
  assert.deepEqual(p1.items.map((s) => s.metadata?.name), ['s0', 's1', 's2']);
  assert.ok(p1.metadata?._continue);
  assert.equal(p1.metadata?.remainingItemCount, 4);
  // Changes after the first page do not show up in later pages of the same list.
  api.upsert('services', clusterIPService('ns', 's4', ['10.9.9.9']));
  api.upsert('services', clusterIPService('ns', 's9', ['10.0.0.99']));
  api.remove('services', 'ns', 's5');
  const p2 = await core.listServiceForAllNamespaces({ limit: 3, _continue: p1.metadata!._continue! });
  assert.deepEqual(p2.items.map((s) => s.metadata?.name), ['s3', 's4', 's5']);
  assert.equal(p2.items[1]?.spec?.clusterIP, '10.0.0.5');
  assert.equal(p2.metadata?.resourceVersion, p1.metadata?.resourceVersion);
  const p3 = await core.listServiceForAllNamespaces({ limit: 3, _continue: p2.metadata!._continue! });
  assert.deepEqual(p3.items.map((s) => s.metadata?.name), ['s6']);
  assert.equal(p3.metadata?._continue, undefined);

  const q1 = await core.listServiceForAllNamespaces({ limit: 2 });
  api.faults.expireContinueTokens();
  await assert.rejects(core.listServiceForAllNamespaces({ limit: 2, _continue: q1.metadata!._continue! }), (e: { code?: number; body?: string }) => {
    assert.equal(e.code, 410);
    return true;
  });
  assert.ok(api.requests.some((r) => r.query['limit'] === '3' && r.query['continue']));
});

test('a list resourceVersion is read as kube-apiserver reads it: not older than N, exactly N with a limit, too large after a restore from backup', async (t) => {
  const api = await server(t, { tooLargeWaitMs: 100 });
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  const then = api.resourceVersion;
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.11']));
  api.remove('services', 'ns', 'b');
  api.upsert('services', clusterIPService('ns', 'c', ['10.0.0.3']));
  const names = (l: { items: V1Service[] }) => l.items.map((s) => `${s.metadata?.name} ${s.spec?.clusterIP}`);

  // not older than N (no limit), and any ('0'): the latest here
  for (const resourceVersion of [String(then), '0']) {
    const l = await core.listServiceForAllNamespaces({ resourceVersion });
    assert.deepEqual(names(l), ['a 10.0.0.11', 'c 10.0.0.3']);
    assert.equal(l.metadata?.resourceVersion, String(api.resourceVersion));
  }
  // exactly N (with a limit): the state then, paged at that version
  const p1 = await core.listServiceForAllNamespaces({ resourceVersion: String(then), limit: 1 });
  assert.deepEqual(names(p1), ['a 10.0.0.1']);
  assert.equal(p1.metadata?.resourceVersion, String(then));
  const p2 = await core.listServiceForAllNamespaces({ limit: 1, _continue: p1.metadata!._continue! });
  assert.deepEqual(names(p2), ['b 10.0.0.2']);
  // a later page with a version is refused, as kube-apiserver does
  await assert.rejects(core.listServiceForAllNamespaces({ limit: 1, _continue: p1.metadata!._continue!, resourceVersion: String(then) }), (e: { code?: number }) => e.code === 400);
  // exactly N once compacted: 410
  api.faults.compactHistory();
  await assert.rejects(core.listServiceForAllNamespaces({ resourceVersion: String(then), limit: 1 }), (e: { code?: number; body?: unknown }) => {
    assert.equal(e.code, 410);
    assert.match(JSON.stringify(e.body), /too old/);
    return true;
  });

  // etcd restored from a backup: a version a client saw is now ahead of the server
  const seen = api.resourceVersion;
  api.upsert('services', clusterIPService('ns', 'd', ['10.0.0.4']));
  api.faults.restoreBackup(seen);
  assert.equal(api.get('services', 'ns', 'd'), undefined);
  await assert.rejects(core.listServiceForAllNamespaces({ resourceVersion: String(seen + 1) }), (e: { code?: number; body?: unknown }) => {
    assert.equal(e.code, 504);
    assert.match(JSON.stringify(e.body), /ResourceVersionTooLarge/);
    return true;
  });
  // ... and served once the server gets there (it waits for it)
  const waiting = core.listServiceForAllNamespaces({ resourceVersion: String(seen + 1) });
  api.upsert('services', clusterIPService('ns', 'e', ['10.0.0.5']));
  assert.deepEqual(names(await waiting), ['a 10.0.0.11', 'c 10.0.0.3', 'e 10.0.0.5']);
  const tooLargeWatch = await fetch(`${api.url}/api/v1/services?watch=true&resourceVersion=${api.resourceVersion + 5}`, { headers: { authorization: `Bearer ${api.token}` } });
  assert.equal(tooLargeWatch.status, 504);
});

test('a watch replays events after its resourceVersion, then streams live ADDED/MODIFIED/DELETED', async (t) => {
  const api = await server(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const from = api.resourceVersion;
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  api.upsert('pods', pod('ns', 'p', ['10.1.0.1'])); // another resource: not in this watch

  const w = await openWatch(api, '/api/v1/services', { resourceVersion: String(from), allowWatchBookmarks: true });
  t.after(w.abort);
  await w.until(1);
  await api.waitForWatches('services');
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.9']));
  api.remove('services', 'ns', 'b');
  api.faults.bookmark();
  await w.until(4);
  assert.deepEqual(w.events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`), ['ADDED b', 'MODIFIED a', 'DELETED b', 'BOOKMARK ']);
  assert.equal(w.events[3]?.object.metadata?.resourceVersion, String(api.resourceVersion));
  const rvs = w.events.slice(0, 3).map((e) => Number(e.object.metadata?.resourceVersion));
  assert.deepEqual(rvs, [...rvs].sort((x, y) => x - y));

  assert.equal(api.faults.dropWatches(), 1);
  assert.equal(await w.done, null);
});

test('a watch from a compacted resourceVersion gets an ERROR event with a 410 Status, then the stream ends', async (t) => {
  const api = await server(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const old = api.resourceVersion;
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.2']));
  api.faults.compactHistory();
  const w = await openWatch(api, '/api/v1/services', { resourceVersion: String(old) });
  await w.until(1);
  assert.equal(w.events[0]?.type, 'ERROR');
  assert.equal(w.events[0]?.object.code, 410);
  assert.equal(w.events[0]?.object.reason, 'Expired');
  assert.equal(await w.done, null);

  // A small history also expires: 3 events kept, the watch asks for older ones.
  const small = await server(t, { historySize: 3 });
  small.upsert('services', clusterIPService('ns', 'x', ['10.0.0.1']));
  const early = small.resourceVersion;
  for (let i = 0; i < 4; i++) small.upsert('services', clusterIPService('ns', `y${i}`, ['10.0.0.2']));
  const w2 = await openWatch(small, '/api/v1/services', { resourceVersion: String(early) });
  await w2.until(1);
  assert.equal(w2.events[0]?.object.code, 410);
});

test('client-node makeInformer lists then watches through the fake server', async (t) => {
  const api = await server(t);
  api.upsert('services', clusterIPService('ns', 'first', ['10.0.0.1']));
  const kc = api.kubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer<V1Service>(kc, '/api/v1/services', () => core.listServiceForAllNamespaces());
  const seen: string[] = [];
  let wake = (): void => {};
  informer.on('add', (s) => {
    seen.push(`add ${s.metadata?.name}`);
    wake();
  });
  informer.on('update', (s) => {
    seen.push(`update ${s.metadata?.name} ${s.spec?.clusterIP}`);
    wake();
  });
  informer.on('delete', (s) => {
    seen.push(`delete ${s.metadata?.name}`);
    wake();
  });
  await informer.start();
  t.after(() => informer.stop());
  await api.waitForWatches('services');
  api.upsert('services', clusterIPService('ns', 'second', ['10.0.0.2']));
  api.upsert('services', clusterIPService('ns', 'first', ['10.0.0.3']));
  api.remove('services', 'ns', 'second');
  await new Promise<void>((resolve) => {
    wake = () => seen.length >= 4 && resolve();
    wake();
  });
  assert.deepEqual(seen, ['add first', 'add second', 'update first 10.0.0.3', 'delete second']);
  const watchReq = api.requests.find((r) => r.watch);
  assert.equal(watchReq?.path, '/api/v1/services');
  assert.ok(Number(watchReq?.query['resourceVersion']) > 0);
});

test('faults: injected 500s, server down (connection refused) and back with the same state', async (t) => {
  const api = await server(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  api.faults.failRequests(2, 500, { watch: false });
  for (let i = 0; i < 2; i++) {
    await assert.rejects(core.listServiceForAllNamespaces(), (e: { code?: number }) => e.code === 500);
  }
  assert.equal((await core.listServiceForAllNamespaces()).items.length, 1);

  const w = await openWatch(api, '/api/v1/services', { resourceVersion: String(api.resourceVersion) });
  await api.waitForWatches('services');
  const rv = api.resourceVersion;
  await api.faults.pause();
  assert.notEqual(await w.done, null); // the cut watch ends with an error
  await assert.rejects(core.listServiceForAllNamespaces(), (e: { code?: string }) => String(e.code ?? e).includes('ECONNREFUSED'));
  await api.faults.resume();
  const after = await core.listServiceForAllNamespaces();
  assert.equal(after.metadata?.resourceVersion, String(rv));
  assert.equal(after.items[0]?.spec?.clusterIP, '10.0.0.1');
  assert.equal(api.requests.filter((r) => r.status === 500).length, 2);
});

test('HTTPS with a self-signed CA carried in the kubeconfig', async (t) => {
  const api = await server(t, { tls: true });
  assert.match(api.url, /^https:/);
  api.upsert('services', clusterIPService('ns', 'tls', ['10.0.0.7']));
  const list = await api.kubeConfig().makeApiClient(CoreV1Api).listServiceForAllNamespaces();
  assert.equal(list.items[0]?.metadata?.name, 'tls');
  const w = await openWatch(api, '/api/v1/services', {});
  t.after(w.abort);
  await w.until(1);
  assert.equal(w.events[0]?.type, 'ADDED');
});

test('labelSelector: lists keep matching objects; a watch sees a move out as DELETED and a move in as ADDED', async (t) => {
  const api = await server(t);
  const labelled = (name: string, labels: Record<string, string>) => ({ ...clusterIPService('ns', name, ['10.0.0.1']), metadata: { namespace: 'ns', name, labels } });
  api.upsert('services', labelled('a', { tier: 'web' }));
  api.upsert('services', labelled('b', { tier: 'db' }));
  api.upsert('namespaces', { metadata: { name: 'ns', labels: { team: 'x' } } });
  const core = api.kubeConfig().makeApiClient(CoreV1Api);
  const list = await core.listServiceForAllNamespaces({ labelSelector: 'tier in (web, cache),!legacy' });
  assert.deepEqual(list.items.map((s) => s.metadata?.name), ['a']);
  assert.deepEqual((await core.listNamespace({ labelSelector: 'team=x' })).items.map((n) => [n.metadata?.name, n.metadata?.namespace]), [['ns', undefined]], 'Namespaces are cluster-scoped');
  await assert.rejects(core.listServiceForAllNamespaces({ labelSelector: 'tier in (web' }), /400/);

  const w = await openWatch(api, '/api/v1/services', { resourceVersion: list.metadata?.resourceVersion, labelSelector: 'tier=web' });
  t.after(w.abort);
  await api.waitForWatches('services');
  api.upsert('services', labelled('a', { tier: 'old' })); // out
  api.upsert('services', labelled('b', { tier: 'web' })); // in
  api.upsert('services', labelled('c', { tier: 'db' })); // never
  api.upsert('services', labelled('b', { tier: 'web', v: '2' })); // stays
  await w.until(3);
  assert.deepEqual(w.events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`), ['DELETED a', 'ADDED b', 'MODIFIED b']);
});
