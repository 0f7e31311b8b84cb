// The legacy `*` wildcards through the whole binary's wiring (list/watch → zone → UDP): the zone
// keeps the indexes they read only with --wildcards (records/zone.ts), and answers the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService, type FakeApiServer } from '@kube-dns/testkit';
import { startCluster, waitSynced } from './integration-helpers.js';

const seed = (api: FakeApiServer): void => {
  api.upsert('services', clusterIPService('ns1', 'web', ['10.0.1.1'], [{ name: 'http', port: 80 }]));
  api.upsert('services', clusterIPService('ns2', 'web', ['10.0.2.1'], [{ name: 'http', port: 80 }]));
  api.upsert('services', clusterIPService('ns2', 'db', ['10.0.2.2'], [{ name: 'sql', port: 5432 }]));
};

test('with --wildcards, <svc>.* and *.<ns> answer across namespaces and stay cached across changes elsewhere', async (t) => {
  const c = await startCluster({ args: ['--wildcards'], seed });
  t.after(() => c.stop());
  await waitSynced(c);
  assert.deepEqual(datas((await c.ask('web.*.svc.cluster.local', 'A')).packet.answers).sort(), ['10.0.1.1', '10.0.2.1']);
  assert.deepEqual(datas((await c.ask('*.ns2.svc.cluster.local', 'A')).packet.answers).sort(), ['10.0.2.1', '10.0.2.2']);
  const hits = () => c.dns.handler.cache.hits;
  const before = hits();
  await c.ask('*.ns2.svc.cluster.local', 'A');
  assert.equal(hits(), before + 1, '*.ns2 comes from the cache');

  // a change in ns1 leaves *.ns2 cached; a change in ns2 shows at once
  c.api.upsert('services', clusterIPService('ns1', 'other', ['10.0.1.9']));
  for (let i = 0; !(datas((await c.ask('other.ns1.svc.cluster.local', 'A')).packet.answers).length > 0); i++) {
    assert.ok(i < 100, 'the new ns1 service never appeared');
    await new Promise((r) => setTimeout(r, 20));
  }
  const h1 = hits();
  assert.deepEqual(datas((await c.ask('*.ns2.svc.cluster.local', 'A')).packet.answers).sort(), ['10.0.2.1', '10.0.2.2']);
  assert.equal(hits(), h1 + 1, 'a change in another namespace keeps *.ns2 cached');
  c.api.upsert('services', clusterIPService('ns2', 'web', ['10.0.2.7'], [{ name: 'http', port: 80 }]));
  for (let i = 0; ; i++) {
    const got = datas((await c.ask('*.ns2.svc.cluster.local', 'A')).packet.answers).sort();
    if (got.join() === '10.0.2.2,10.0.2.7') break;
    assert.ok(i < 100, `*.ns2 still ${got.join()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.deepEqual(datas((await c.ask('web.*.svc.cluster.local', 'A')).packet.answers).sort(), ['10.0.1.1', '10.0.2.7']);
});

test('without --wildcards, `*` names are NXDOMAIN and every other name answers as with them', async (t) => {
  const c = await startCluster({ seed });
  t.after(() => c.stop());
  await waitSynced(c);
  for (const name of ['web.*.svc.cluster.local', '*.ns2.svc.cluster.local']) assert.equal((await c.ask(name, 'A')).packet.rcode, 'NXDOMAIN', name);
  assert.deepEqual(datas((await c.ask('web.ns2.svc.cluster.local', 'A')).packet.answers), ['10.0.2.1']);
  assert.deepEqual(datas((await c.ask('1.2.0.10.in-addr.arpa', 'PTR')).packet.answers), ['web.ns2.svc.cluster.local.']);
});
