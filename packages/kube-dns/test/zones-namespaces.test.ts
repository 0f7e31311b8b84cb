// --namespaces, --labels and --namespace-labels: only what is selected is served, the rest is
// NXDOMAIN; --namespaces never fetches other namespaces; the selections follow live changes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService, namespaceObject, withLabels, type FakeApiServer } from '@kube-dns/testkit';
import { eventually, startCluster, waitSynced, type Cluster } from './integration-helpers.js';

const Z = 'cluster.local';
const running: Cluster[] = [];
after(() => Promise.all(running.map((c) => c.stop())));

async function cluster(args: string[], seed: (api: FakeApiServer) => void): Promise<Cluster> {
  const c = await startCluster({ args, seed });
  running.push(c);
  await waitSynced(c);
  return c;
}

const a = async (c: Cluster, name: string): Promise<string[] | string> => {
  const r = await c.ask(name, 'A');
  return r.packet.rcode === 'NOERROR' ? datas(r.packet.answers) : r.packet.rcode!;
};

test('--namespaces: listed namespaces answer, others are NXDOMAIN (pod names too) and never listed or watched', async () => {
  const c = await cluster(['--namespaces=team-a,team-b'], (api) => {
    api.upsert('services', clusterIPService('team-a', 'web', ['10.3.0.1']));
    api.upsert('services', clusterIPService('team-c', 'web', ['10.3.0.3']));
  });
  assert.deepEqual(await a(c, `web.team-a.svc.${Z}`), ['10.3.0.1']);
  assert.equal(await a(c, `web.team-c.svc.${Z}`), 'NXDOMAIN');
  assert.deepEqual(await a(c, `10-4-0-1.team-b.pod.${Z}`), ['10.4.0.1']);
  assert.equal(await a(c, `10-4-0-1.team-c.pod.${Z}`), 'NXDOMAIN');
  c.api.upsert('services', clusterIPService('team-b', 'late', ['10.3.0.2']));
  c.api.upsert('services', clusterIPService('team-c', 'late', ['10.3.0.4']));
  await eventually(async () => assert.deepEqual(await a(c, `late.team-b.svc.${Z}`), ['10.3.0.2']), 5000);
  assert.equal(await a(c, `late.team-c.svc.${Z}`), 'NXDOMAIN');
  const paths = new Set(c.api.requests.filter((r) => r.resource === 'services' || r.resource === 'endpointslices').map((r) => r.path));
  assert.deepEqual([...paths].sort(), [
    '/api/v1/namespaces/team-a/services',
    '/api/v1/namespaces/team-b/services',
    '/apis/discovery.k8s.io/v1/namespaces/team-a/endpointslices',
    '/apis/discovery.k8s.io/v1/namespaces/team-b/endpointslices',
  ]);
  assert.equal(c.dns.sync.stats().services?.objects, 2, 'objects summed over the per-namespace watches');
});

test('--labels: only matching Services are served; a relabel moves a Service in and out', async () => {
  const c = await cluster(['--labels=dns notin (off)'], (api) => {
    api.upsert('services', clusterIPService('default', 'public', ['10.5.0.1']));
    api.upsert('services', withLabels(clusterIPService('default', 'secret', ['10.5.0.2']), { dns: 'off' }));
  });
  assert.deepEqual(await a(c, `public.default.svc.${Z}`), ['10.5.0.1']);
  assert.equal(await a(c, `secret.default.svc.${Z}`), 'NXDOMAIN');
  assert.equal((await c.ask('2.0.5.10.in-addr.arpa', 'PTR')).packet.answers?.length ?? 0, 0, 'no PTR for a left-out Service');
  c.api.upsert('services', withLabels(clusterIPService('default', 'public', ['10.5.0.1']), { dns: 'off' }));
  c.api.upsert('services', withLabels(clusterIPService('default', 'secret', ['10.5.0.2']), { dns: 'on' }));
  await eventually(async () => {
    assert.equal(await a(c, `public.default.svc.${Z}`), 'NXDOMAIN');
    assert.deepEqual(await a(c, `secret.default.svc.${Z}`), ['10.5.0.2']);
  }, 5000);
  // the API server filters: left-out Services never travel nor are tracked
  const svcReqs = c.api.requests.filter((r) => r.resource === 'services');
  assert.ok(svcReqs.length >= 2 && svcReqs.every((r) => r.query['labelSelector'] === 'dns notin (off)'), JSON.stringify(svcReqs.map((r) => r.query)));
  assert.equal(c.dns.sync.stats().services?.objects, 1);
});

test('--namespace-labels: only namespaces whose labels match; labelling and unlabelling a namespace takes effect live', async () => {
  const c = await cluster(['--namespace-labels=dns=on'], (api) => {
    api.upsert('namespaces', namespaceObject('shop', { dns: 'on' }));
    api.upsert('namespaces', namespaceObject('lab'));
    api.upsert('services', clusterIPService('shop', 'cart', ['10.6.0.1']));
    api.upsert('services', clusterIPService('lab', 'exp', ['10.6.0.2']));
  });
  assert.deepEqual(await a(c, `cart.shop.svc.${Z}`), ['10.6.0.1']);
  assert.equal(await a(c, `exp.lab.svc.${Z}`), 'NXDOMAIN');
  assert.deepEqual(await a(c, `10-7-0-1.shop.pod.${Z}`), ['10.7.0.1']);
  assert.equal(await a(c, `10-7-0-1.lab.pod.${Z}`), 'NXDOMAIN');
  assert.equal(await a(c, `10-7-0-1.nowhere.pod.${Z}`), 'NXDOMAIN', 'a namespace that does not exist');
  c.api.upsert('namespaces', namespaceObject('lab', { dns: 'on' }));
  c.api.upsert('namespaces', namespaceObject('shop', { dns: 'paused' }));
  await eventually(async () => {
    assert.deepEqual(await a(c, `exp.lab.svc.${Z}`), ['10.6.0.2']);
    assert.deepEqual(await a(c, `10-7-0-1.lab.pod.${Z}`), ['10.7.0.1'], 'cached NXDOMAIN of the pod name forgotten');
    assert.equal(await a(c, `cart.shop.svc.${Z}`), 'NXDOMAIN');
    assert.equal(await a(c, `10-7-0-1.shop.pod.${Z}`), 'NXDOMAIN');
  }, 5000);
  c.api.remove('namespaces', '', 'lab');
  await eventually(async () => assert.equal(await a(c, `exp.lab.svc.${Z}`), 'NXDOMAIN'), 5000);
  assert.ok(c.api.requests.some((r) => r.resource === 'namespaces' && r.watch), 'Namespaces are watched');
});

test('without these flags Namespaces are not watched and every namespace is served', async () => {
  const c = await cluster([], (api) => api.upsert('services', clusterIPService('any', 'x', ['10.8.0.1'])));
  assert.deepEqual(await a(c, `x.any.svc.${Z}`), ['10.8.0.1']);
  assert.equal(c.api.requests.some((r) => r.resource === 'namespaces'), false);
});
