// --ignore-empty-service: a ClusterIP service name without a ready endpoint is NXDOMAIN (as CoreDNS
// `kubernetes { ignore empty_service }`), so clients fail over at once instead of connecting to a
// cluster IP nobody serves; it comes back as soon as an endpoint is ready.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService, endpointSlice, type FakeApiServer } from '@kube-dns/testkit';
import { eventually, startCluster, waitSynced, type Cluster } from './integration-helpers.js';

const Z = 'cluster.local';
const seed = (api: FakeApiServer): void => {
  api.upsert('services', clusterIPService('default', 'api', ['10.9.0.1'], [{ name: 'http', port: 80 }]));
  api.upsert('endpointslices', endpointSlice('default', 'api', 'api-1', 'IPv4', [{ ip: '10.9.1.1', ready: false }], [{ name: 'http', port: 8080 }]));
  api.upsert('services', clusterIPService('default', 'up', ['10.9.0.2']));
  api.upsert('endpointslices', endpointSlice('default', 'up', 'up-1', 'IPv4', [{ ip: '10.9.2.1' }]));
  api.upsert('services', clusterIPService('default', 'bare', ['10.9.0.3'])); // no slice at all
};

let on: Cluster;
let off: Cluster;
before(async () => {
  [on, off] = await Promise.all([startCluster({ args: ['--ignore-empty-service'], seed }), startCluster({ seed })]);
  await Promise.all([waitSynced(on), waitSynced(off)]);
});
after(() => Promise.all([on.stop(), off.stop()]));

test('on: no ready endpoint → NXDOMAIN for the name and its SRV names; a ready one → the cluster IP', async () => {
  assert.equal((await on.ask(`api.default.svc.${Z}`, 'A')).packet.rcode, 'NXDOMAIN', 'only a not-ready endpoint');
  assert.equal((await on.ask(`_http._tcp.api.default.svc.${Z}`, 'SRV')).packet.rcode, 'NXDOMAIN');
  assert.equal((await on.ask(`bare.default.svc.${Z}`, 'A')).packet.rcode, 'NXDOMAIN', 'no slice');
  assert.deepEqual(datas((await on.ask(`up.default.svc.${Z}`, 'A')).packet.answers), ['10.9.0.2']);
});

test('on: the name appears when an endpoint turns ready and goes when none is left', async () => {
  on.api.upsert('endpointslices', endpointSlice('default', 'api', 'api-1', 'IPv4', [{ ip: '10.9.1.1', ready: true }], [{ name: 'http', port: 8080 }]));
  await eventually(async () => assert.deepEqual(datas((await on.ask(`api.default.svc.${Z}`, 'A')).packet.answers), ['10.9.0.1']), 5000);
  on.api.remove('endpointslices', 'default', 'up-1');
  await eventually(async () => assert.equal((await on.ask(`up.default.svc.${Z}`, 'A')).packet.rcode, 'NXDOMAIN'), 5000);
});

test('off (the default): a service without endpoints still answers its cluster IP', async () => {
  assert.deepEqual(datas((await off.ask(`bare.default.svc.${Z}`, 'A')).packet.answers), ['10.9.0.3']);
  assert.deepEqual(datas((await off.ask(`api.default.svc.${Z}`, 'A')).packet.answers), ['10.9.0.1']);
});
