import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import type { V1Service } from '@kubernetes/client-node';
import { silentLogger } from '@kube-dns/config';
import { clusterIPService, startFakeApiServer, type FakeApiServer, type FakeApiServerOptions } from '@kube-dns/testkit';
import { listFunction, Reflector, WATCH_PATHS, type Clock, type ListFn } from '../src/kube/index.js';
import { waitUntil } from './kube-helpers.js';

/** A clock whose sleeps return at once and are recorded: backoff without waiting. */
function fakeClock(onSleep: (ms: number, count: number) => void | Promise<void> = () => {}) {
  const sleeps: number[] = [];
  const clock: Clock = {
    now: () => Date.now(),
    random: () => 0,
    async sleep(ms) {
      sleeps.push(ms);
      await onSleep(ms, sleeps.length);
      await tick();
    },
  };
  return { clock, sleeps };
}

function serviceReflector(api: FakeApiServer, clock: Clock, list?: ListFn<V1Service>) {
  const applied: string[] = [];
  const r = new Reflector<V1Service>({
    resource: 'services',
    kc: api.kubeConfig(),
    watchPath: WATCH_PATHS.services,
    list: list ?? (listFunction(api.kubeConfig(), 'services') as ListFn<V1Service>),
    handler: {
      upsert: (s) => applied.push(`upsert ${s.metadata?.name} ${s.spec?.clusterIP}`),
      delete: (ns, name) => applied.push(`delete ${ns}/${name}`),
    },
    log: silentLogger(),
    clock,
    pageSize: 2,
  });
  return { r, applied };
}

/** A fake API server (holding what `seed` puts in) and a services reflector on the fake clock, synced and watching. */
async function syncedReflector(t: import('node:test').TestContext, opts: FakeApiServerOptions = {}, seed: (api: FakeApiServer) => void = () => {}) {
  const api = await startFakeApiServer(opts);
  t.after(() => api.close());
  seed(api);
  const { clock, sleeps } = fakeClock();
  const { r, applied } = serviceReflector(api, clock);
  t.after(() => r.stop());
  r.start();
  await waitUntil(() => r.synced, 'synced');
  await api.waitForWatches('services');
  return { api, sleeps, r, applied };
}

test('API server unreachable at start: retries follow the backoff schedule, then it syncs', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  await api.faults.pause();
  const { clock, sleeps } = fakeClock(async (_ms, n) => {
    if (n === 10) await api.faults.resume();
  });
  const { r, applied } = serviceReflector(api, clock);
  t.after(() => r.stop());
  r.start();
  await waitUntil(() => r.synced, 'synced after the server came back', 5000);
  assert.deepEqual(sleeps, [200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
  assert.deepEqual(applied, ['upsert a 10.0.0.1']);
  assert.equal(r.stats().errors, 10);
  assert.match(r.stats().lastError ?? '', /ECONNREFUSED/);
});

test('failing re-watches back off; a watch that delivered events resets the backoff', async (t) => {
  const { api, sleeps, r, applied } = await syncedReflector(t);

  api.faults.failRequests(4, 500, { watch: true });
  api.faults.dropWatches(); // ends with no events: a failure too
  await api.waitForWatches('services');
  assert.deepEqual(sleeps, [200, 400, 800, 1600, 3200]);

  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await waitUntil(() => applied.includes('upsert b 10.0.0.2'), 'event on the new watch');
  api.faults.dropWatches(); // a productive watch ended: re-watch at once, backoff reset
  await waitUntil(() => r.stats().watchRestarts === 6, 'sixth re-watch');
  await api.waitForWatches('services');
  assert.equal(sleeps.length, 5);
  api.faults.dropWatches();
  await waitUntil(() => sleeps.length === 6, 'next failure');
  assert.equal(sleeps[5], 200);
  assert.equal(r.stats().errors, 4);
});

test('an expired continue token: the list is made again in one request (no limit), at once, and nothing is lost', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  for (let i = 0; i < 5; i++) api.upsert('services', clusterIPService('ns', `s${i}`, [`10.0.0.${i}`]));
  const real = listFunction(api.kubeConfig(), 'services') as ListFn<V1Service>;
  let pages = 0;
  // The real client lists; between its first and second page the server forgets the snapshot.
  const list: ListFn<V1Service> = async (req) => {
    const page = await real(req);
    if (++pages === 1) {
      api.faults.expireContinueTokens();
      api.remove('services', 'ns', 's4');
    }
    return page;
  };
  const { clock, sleeps } = fakeClock();
  const { r, applied } = serviceReflector(api, clock, list);
  t.after(() => r.stop());
  r.start();
  await waitUntil(() => r.synced, 'synced');
  const lists = api.requests.filter((q) => !q.watch);
  assert.deepEqual(lists.map((q) => [q.status, q.query['continue'] ? 'next' : Number(q.query['limit'] ?? 0) > 0 ? 'first' : 'all']), [
    [200, 'first'],
    [410, 'next'],
    [200, 'all'],
  ]);
  assert.equal(sleeps.length, 0);
  assert.equal(r.stats().objects, 4);
  assert.deepEqual(applied.sort(), ['upsert s0 10.0.0.0', 'upsert s1 10.0.0.1', 'upsert s2 10.0.0.2', 'upsert s3 10.0.0.3']);
});

test('a big list yields to the event loop while applying', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  const total = 3000;
  for (let i = 0; i < total; i++) api.upsert('services', clusterIPService('ns', `s${i}`, [`10.1.${i >> 8}.${i & 255}`]));
  // Other work (a DNS query, say) counts its turns; we look at how many fall between the first
  // and the last object applied from the single 3000-object page.
  let turns = 0;
  let applied = 0;
  let turnsAtFirst = 0;
  let turnsAtLast = 0;
  const { clock } = fakeClock();
  const r = new Reflector<V1Service>({
    resource: 'services',
    kc: api.kubeConfig(),
    watchPath: WATCH_PATHS.services,
    list: listFunction(api.kubeConfig(), 'services') as ListFn<V1Service>,
    handler: {
      upsert: () => {
        if (applied++ === 0) turnsAtFirst = turns;
        if (applied === total) turnsAtLast = turns;
      },
      delete: () => {},
    },
    log: silentLogger(),
    clock,
    pageSize: total,
    yieldEvery: 100,
  });
  t.after(() => r.stop());
  let listing = true;
  r.once('synced', () => (listing = false));
  r.start();
  while (listing) {
    turns++;
    await tick();
  }
  assert.equal(applied, total);
  assert.ok(turnsAtLast - turnsAtFirst >= total / 100 - 1, `other work ran ${turnsAtLast - turnsAtFirst} times while applying`);
});

test('watches the server keeps refusing (403) while lists work: a relist after two in a row brings the changes', async (t) => {
  // RBAC granting list but not watch, or a proxy refusing streams: re-watching alone never ends
  const api = await startFakeApiServer();
  t.after(() => api.close());
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const applied: string[] = [];
  const r = new Reflector<V1Service>({
    resource: 'services',
    kc: api.kubeConfig(),
    watchPath: WATCH_PATHS.services,
    list: listFunction(api.kubeConfig(), 'services') as ListFn<V1Service>,
    handler: { upsert: (x) => applied.push(`upsert ${x.metadata?.name}`), delete: (ns, name) => applied.push(`delete ${ns}/${name}`) },
    log: silentLogger(),
    backoff: { initialMs: 20, maxMs: 100 },
  });
  t.after(() => r.stop());
  r.start();
  await waitUntil(() => r.synced, 'synced');
  await api.waitForWatches('services');
  api.faults.failRequests(1_000_000, 403, { resource: 'services', watch: true });
  api.faults.dropWatches({ resource: 'services' });
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  api.remove('services', 'ns', 'a');
  await waitUntil(() => applied.includes('upsert b') && applied.includes('delete ns/a'), 'the changes, by a relist', 5000);
  assert.ok(r.stats().relists >= 1);
});

test('a watch the server closes cleanly after a second or more is resumed at once, with no backoff', async (t) => {
  // a proxy's idle timeout on a quiet resource: waiting a growing backoff each time delayed changes by up to 30 s
  const { api, sleeps, r, applied } = await syncedReflector(t);
  for (let i = 0; i < 3; i++) {
    await api.waitForWatches('services');
    await new Promise((res) => setTimeout(res, 1100));
    api.faults.dropWatches({ resource: 'services' });
    await waitUntil(() => r.stats().watchRestarts === i + 1, `re-watch ${i + 1}`);
  }
  assert.deepEqual(sleeps, [], 'no backoff after a clean close');
  await api.waitForWatches('services');
  api.upsert('services', clusterIPService('ns', 'c', ['10.0.0.3']));
  await waitUntil(() => applied.includes('upsert c 10.0.0.3'), 'a change right after');
});

/** Five Services listed two a page, synced and watching, through `list` (default: the real client). */
async function pagedReflector(t: import('node:test').TestContext, wrap: (real: ListFn<V1Service>) => ListFn<V1Service>) {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  for (let i = 0; i < 5; i++) api.upsert('services', clusterIPService('ns', `s${i}`, [`10.0.0.${i}`]));
  const { clock, sleeps } = fakeClock();
  const { r, applied } = serviceReflector(api, clock, wrap(listFunction(api.kubeConfig(), 'services') as ListFn<V1Service>));
  t.after(() => r.stop());
  r.start();
  await waitUntil(() => r.synced, 'synced');
  await api.waitForWatches('services');
  /** A change while the watch is down, and a relist forced (the watch resumes from a compacted version: 410). */
  const relistAfterDeleting = (name: string) => {
    api.faults.dropWatches({ resource: 'services' });
    api.remove('services', 'ns', name);
    api.faults.compactHistory();
  };
  return { api, sleeps, r, applied, relistAfterDeleting };
}
const pageKind = (q: { query: Record<string, string> }) => (q.query['continue'] ? 'next' : Number(q.query['limit'] ?? 0) > 0 ? 'first' : 'all');

test('a relist whose continue token the server will not take again starts over from the first page, rather than retrying that token for ever', async (t) => {
  // client-go's pager gives up on a failed page and its reflector lists anew; retrying one
  // token the server refuses (400) kept the resource without a watch, its changes unseen, for ever
  let relisting = false;
  let refused: string | undefined;
  const { r, applied, relistAfterDeleting } = await pagedReflector(t, (real) => async (req) => {
    if (relisting && req.continueToken !== undefined && (refused === undefined || refused === req.continueToken)) {
      refused = req.continueToken;
      throw Object.assign(new Error('HTTP 400: continue key is not valid'), { code: 400 });
    }
    return real(req);
  });
  relisting = true;
  relistAfterDeleting('s4');
  await waitUntil(() => applied.includes('delete ns/s4'), 'the deletion, by a relist that got past the refused token', 5000);
  assert.equal(r.stats().objects, 4);
});

test('a list in one request (after an expired continue token) that fails is followed by a paged one, not by the same for ever', async (t) => {
  // a resource too big to list in one request within the timeout never synced again
  let relisting = false;
  let expired = false;
  let unpagedTries = 0;
  const { api, r, applied, relistAfterDeleting } = await pagedReflector(t, (real) => async (req) => {
    if (relisting && req.limit === 0) {
      unpagedTries++;
      throw Object.assign(new Error('HTTP 504: Timeout'), { code: 504 });
    }
    if (relisting && req.continueToken !== undefined && !expired) {
      expired = true;
      api.faults.expireContinueTokens();
    }
    return real(req);
  });
  api.requests.length = 0;
  relisting = true;
  relistAfterDeleting('s1');
  await waitUntil(() => applied.includes('delete ns/s1'), 'the deletion, by a paged relist', 5000);
  const lists = api.requests.filter((q) => !q.watch).map((q) => `${pageKind(q)} ${q.status}`);
  // the first list came in pages (a server without a watch cache), so the relist is paged too:
  // at the last version seen, compacted (410), then the latest at once; paged until the token
  // expired; one list in one request (as client-go makes), failed; then paged again from the
  // first page (four Services left, two a page)
  assert.deepEqual(lists, ['first 410', 'first 200', 'next 410', 'first 200', 'next 200']);
  assert.equal(unpagedTries, 1);
  assert.equal(r.stats().objects, 4);
});

test('a list answered 200 with a body that is no list (a Status, from a proxy) fails and is retried: nothing is deleted', async (t) => {
  const { api, r, applied } = await syncedReflector(t);
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await waitUntil(() => r.stats().objects === 2, 'both Services');
  api.faults.failRequests(1, 200, { watch: false });
  const before = r.stats().errors;
  // a change while the watch is down, and a relist forced (the watch resumes from a compacted version: 410)
  api.faults.dropWatches({ resource: 'services' });
  api.remove('services', 'ns', 'b');
  api.faults.compactHistory();
  await waitUntil(() => applied.includes('delete ns/b'), 'the relist after the bad answer', 5000);
  assert.deepEqual(applied.filter((a) => a.startsWith('delete')), ['delete ns/b'], 'only the Service really deleted');
  assert.equal(r.stats().objects, 1);
  assert.equal(r.stats().errors, before + 1, 'the bad answer, counted');
  assert.match(r.stats().lastError ?? '', /no items/);
});

test('the first list asks for any version (resourceVersion=0, the watch cache); a relist asks for the last one seen, in one request, and brings the changes', async (t) => {
  // a relist with no version is a quorum read from etcd (API servers before 1.31): a fleet of
  // replicas relisting after an API server restart loaded etcd for nothing
  const { api, sleeps, applied } = await syncedReflector(t, {}, (a) => a.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1'])));
  assert.deepEqual(api.requests.filter((q) => !q.watch).map((q) => [q.query['resourceVersion'], q.query['limit']]), [['0', '2']], 'the first list: any version, paged');
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await waitUntil(() => applied.includes('upsert b 10.0.0.2'), 'b, by the watch');
  const seen = String(api.resourceVersion);
  api.requests.length = 0;
  api.faults.dropWatches({ resource: 'services' });
  api.remove('services', 'ns', 'a');
  api.faults.compactHistory();
  await waitUntil(() => applied.includes('delete ns/a'), 'the deletion, by a relist', 5000);
  const lists = api.requests.filter((q) => !q.watch);
  assert.deepEqual(lists.map((q) => [q.query['resourceVersion'], Number(q.query['limit'] ?? 0), q.status]), [[seen, 0, 200]]);
  assert.deepEqual(sleeps, [], 'at once');
});

test('etcd restored from a backup: the version kube-dns saw is ahead of the server, and it lists the latest rather than wait for that version for ever', async (t) => {
  // the API server answers a list or watch from a version it has not reached with a 504 "Too
  // large resource version" (after waiting 3 s for it); asked again and again for that version,
  // a quiet resource would keep what the backup undid until something else was written
  const { api, r, applied } = await syncedReflector(t, { tooLargeWaitMs: 50 }, (a) => a.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1'])));
  const backup = api.resourceVersion;
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await waitUntil(() => applied.includes('upsert b 10.0.0.2'), 'b, by the watch');
  api.requests.length = 0;
  api.faults.restoreBackup(backup);
  await waitUntil(() => applied.includes('delete ns/b'), 'b, undone by the restore, deleted', 5000);
  const asked = api.requests.map((q) => `${q.watch ? 'watch' : 'list'} ${q.query['resourceVersion'] ?? 'latest'} ${q.status}`);
  const ahead = String(backup + 1);
  // the watches from the version seen fail; the list from it too (504); then the latest, at once
  assert.deepEqual(asked.slice(0, 4), [`watch ${ahead} 504`, `watch ${ahead} 504`, `list ${ahead} 504`, 'list latest 200']);
  assert.equal(r.stats().objects, 1);
  assert.ok(r.synced);
  // and it watches on from the restored version: a new Service arrives
  await api.waitForWatches('services');
  api.upsert('services', clusterIPService('ns', 'c', ['10.0.0.3']));
  await waitUntil(() => applied.includes('upsert c 10.0.0.3'), 'c, by the watch');
});
