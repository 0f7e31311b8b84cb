// --autopath with a stub domain inside the cluster zone (corp.cluster.local): the pod's own search
// would reach `db.corp.cluster.local` and dnsmasq would send it to the stub's server, so the walk
// must ask that server too, not take the zone's NXDOMAIN and go on to a name the pod would not
// have reached (`db.corp` upstream).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pod, startTestDnsServer } from '@kube-dns/testkit';
import { askFrom, question, records, subnetOf } from './autopath-helpers.js';
import { eventually, startCluster, waitSynced } from './integration-helpers.js';

const POD_IP = '10.244.3.7';

test('autopath asks a stub domain inside the zone for its names, as the pod through dnsmasq would', async (t) => {
  const stub = await startTestDnsServer({
    handler: (q) => (q.name === 'db.corp.cluster.local' && q.type === 'A' ? { answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.77' }] } : { rcode: 'NXDOMAIN' }),
  });
  t.after(() => stub.close());
  // the upstream has the bare name too: the pod's search reaches it only after the stub's name
  const upstream = await startTestDnsServer({
    handler: (q) => (q.name === 'db.corp' && q.type === 'A' ? { answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.66' }] } : { rcode: 'NXDOMAIN' }),
  });
  t.after(() => upstream.close());
  const c = await startCluster({
    args: ['--autopath'],
    resolvConf: 'nameserver 192.0.2.53\nsearch corp.example\n',
    configFiles: {
      upstreamNameservers: JSON.stringify([`127.0.0.1:${upstream.port}`]),
      stubDomains: JSON.stringify({ 'corp.cluster.local': [`127.0.0.1:${stub.port}`] }),
    },
    seed: (api) => api.upsert('pods', pod('shop', 'web-0', [POD_IP])),
  });
  t.after(() => c.stop());
  await waitSynced(c);
  // the stub domain is in force (asked directly)
  await eventually(async () => assert.equal((await c.ask('db.corp.cluster.local', 'A')).packet.answers?.length, 1), 3000);

  const r = await askFrom('127.0.0.1', c.server, question('db.corp.shop.svc.cluster.local', 'A', [subnetOf(POD_IP)]));
  assert.deepEqual(records(r), [
    ['CNAME', 'db.corp.shop.svc.cluster.local', 'db.corp.cluster.local'],
    ['A', 'db.corp.cluster.local', '192.0.2.77'],
  ]);
  assert.ok(!upstream.questions.some((q) => q.name === 'db.corp'), 'the bare name is never reached');
});
