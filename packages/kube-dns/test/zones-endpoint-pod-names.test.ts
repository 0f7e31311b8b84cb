// --endpoint-pod-names: a headless endpoint without a hostname is named after its pod (what
// clustered Erlang/Elixir and Akka apps resolve), over real UDP against the fake API server.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { datas } from '@kube-dns/dns-client';
import { endpointSlice, headlessService, type FakeApiServer } from '@kube-dns/testkit';
import { eventually, startCluster, waitSynced, type Cluster } from './integration-helpers.js';

const Z = 'cluster.local';
const seed = (api: FakeApiServer): void => {
  api.upsert('services', headlessService('beam', 'rabbit', [{ name: 'epmd', port: 4369 }]));
  api.upsert(
    'endpointslices',
    endpointSlice('beam', 'rabbit', 'rabbit-a', 'IPv4', [
      { ip: '10.2.0.1', pod: 'rabbit-7d9f-x2k4q' },
      { ip: '10.2.0.2', pod: 'rabbit.with.dots' }, // not a DNS label: dashed IP as before
      { ip: '10.2.0.3', pod: 'rabbit-other', hostname: 'pinned' }, // a hostname wins
    ], [{ name: 'epmd', port: 4369 }]),
  );
};

let on: Cluster;
let off: Cluster;
before(async () => {
  [on, off] = await Promise.all([startCluster({ args: ['--endpoint-pod-names'], seed }), startCluster({ seed })]);
  await Promise.all([waitSynced(on), waitSynced(off)]);
});
after(() => Promise.all([on.stop(), off.stop()]));

test('with --endpoint-pod-names the pod name answers A and is the SRV target; dotted names and hostnames as before', async () => {
  assert.deepEqual(datas((await on.ask(`rabbit-7d9f-x2k4q.rabbit.beam.svc.${Z}`, 'A')).packet.answers), ['10.2.0.1']);
  assert.equal((await on.ask(`10-2-0-1.rabbit.beam.svc.${Z}`, 'A')).packet.rcode, 'NXDOMAIN', 'the pod name replaces the dashed name');
  assert.deepEqual(datas((await on.ask(`10-2-0-2.rabbit.beam.svc.${Z}`, 'A')).packet.answers), ['10.2.0.2']);
  assert.deepEqual(datas((await on.ask(`pinned.rabbit.beam.svc.${Z}`, 'A')).packet.answers), ['10.2.0.3']);
  const srv = datas((await on.ask(`_epmd._tcp.rabbit.beam.svc.${Z}`, 'SRV')).packet.answers).sort();
  assert.deepEqual(srv, [
    `10 33 4369 10-2-0-2.rabbit.beam.svc.${Z}.`,
    `10 33 4369 pinned.rabbit.beam.svc.${Z}.`,
    `10 33 4369 rabbit-7d9f-x2k4q.rabbit.beam.svc.${Z}.`,
  ].sort());
  assert.deepEqual(datas((await on.ask('1.0.2.10.in-addr.arpa', 'PTR')).packet.answers), [`rabbit-7d9f-x2k4q.rabbit.beam.svc.${Z}.`]);
});

test('the pod name follows a rescheduled pod', async () => {
  on.api.upsert('endpointslices', endpointSlice('beam', 'rabbit', 'rabbit-a', 'IPv4', [{ ip: '10.2.0.9', pod: 'rabbit-7d9f-new01' }], [{ name: 'epmd', port: 4369 }]));
  await eventually(async () => {
    assert.deepEqual(datas((await on.ask(`rabbit-7d9f-new01.rabbit.beam.svc.${Z}`, 'A')).packet.answers), ['10.2.0.9']);
  }, 5000);
  assert.equal((await on.ask(`rabbit-7d9f-x2k4q.rabbit.beam.svc.${Z}`, 'A')).packet.rcode, 'NXDOMAIN');
});

test('off (the default): endpoints without a hostname keep their dashed-IP names', async () => {
  assert.deepEqual(datas((await off.ask(`10-2-0-1.rabbit.beam.svc.${Z}`, 'A')).packet.answers), ['10.2.0.1']);
  assert.equal((await off.ask(`rabbit-7d9f-x2k4q.rabbit.beam.svc.${Z}`, 'A')).packet.rcode, 'NXDOMAIN');
});
