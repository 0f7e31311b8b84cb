import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick } from 'node:timers/promises';
import type { V1Service } from '@kubernetes/client-node';
import { silentLogger } from '@kube-dns/config';
import { clusterIPService, startFakeApiServer, type FakeApiServer } from '@kube-dns/testkit';
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

/** A fake API server and a services reflector on the fake clock, synced and watching. */
async function syncedReflector(t: import('node:test').TestContext) {
  const api = await startFakeApiServer();
  t.after(() => api.close());
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
