// Pod records in each --pods mode, end to end through list/watch of Pods.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { datas } from '@kube-dns/dns-client';
import { pod } from '@kube-dns/testkit';
import { eventually, startCluster, waitSynced } from './integration-helpers.js';

test('--pods=verified: only IPs of existing pods in that namespace; follows pod changes', async (t) => {
  const c = await startCluster({ args: ['--pods=verified'], seed: (api) => api.upsert('pods', pod('web', 'web-0', ['10.244.0.7', 'fd00::7'])) });
  t.after(() => c.stop());
  await waitSynced(c);
  assert.ok(c.api.requests.some((r) => r.resource === 'pods'), 'pods are listed in verified mode');
  assert.deepEqual(datas((await c.ask('10-244-0-7.web.pod.cluster.local', 'A')).packet.answers), ['10.244.0.7']);
  assert.deepEqual(datas((await c.ask('fd00--7.web.pod.cluster.local', 'AAAA')).packet.answers), ['fd00::7']);
  assert.equal((await c.ask('10-244-0-7.other.pod.cluster.local', 'A')).packet.rcode, 'NXDOMAIN', 'wrong namespace');
  assert.equal((await c.ask('10-244-0-8.web.pod.cluster.local', 'A')).packet.rcode, 'NXDOMAIN', 'no such pod');
  c.api.upsert('pods', pod('web', 'web-1', ['10.244.0.8']));
  await eventually(async () => assert.deepEqual(datas((await c.ask('10-244-0-8.web.pod.cluster.local', 'A')).packet.answers), ['10.244.0.8']));
  c.api.remove('pods', 'web', 'web-0');
  await eventually(async () => assert.equal((await c.ask('10-244-0-7.web.pod.cluster.local', 'A')).packet.rcode, 'NXDOMAIN'));
});

test('--pods=verified: a finished pod (Succeeded, Failed) vouches for no IP, in its namespace or after the IP is reused', async (t) => {
  const finished = (namespace: string, name: string, ips: string[], phase: 'Succeeded' | 'Failed') => {
    const p = pod(namespace, name, ips);
    p.status!.phase = phase;
    return p;
  };
  const c = await startCluster({ args: ['--pods=verified'], seed: (api) => api.upsert('pods', finished('batch', 'job-abc', ['10.244.1.7'], 'Succeeded')) });
  t.after(() => c.stop());
  await waitSynced(c);
  assert.equal((await c.ask('10-244-1-7.batch.pod.cluster.local', 'A')).packet.rcode, 'NXDOMAIN', 'a completed job listed at start');
  // no pod name exists under batch.pod: the namespace's name is no empty non-terminal either
  assert.equal((await c.ask('batch.pod.cluster.local', 'A')).packet.rcode, 'NXDOMAIN', 'a namespace of finished pods only');
  c.api.upsert('pods', pod('web', 'api-1', ['10.244.2.9']));
  await eventually(async () => assert.deepEqual(datas((await c.ask('10-244-2-9.web.pod.cluster.local', 'A')).packet.answers), ['10.244.2.9']));
  const webNs = await c.ask('web.pod.cluster.local', 'A');
  assert.deepEqual([webNs.packet.rcode, webNs.packet.answers?.length], ['NOERROR', 0], 'a running pod below: NODATA');
  c.api.upsert('pods', finished('web', 'api-1', ['10.244.2.9'], 'Failed')); // same IPs, now failed
  await eventually(async () => assert.equal((await c.ask('10-244-2-9.web.pod.cluster.local', 'A')).packet.rcode, 'NXDOMAIN', 'running then failed'));
  assert.equal((await c.ask('web.pod.cluster.local', 'A')).packet.rcode, 'NXDOMAIN', 'its only pod finished');
  // the IP goes to a pod of another namespace: only that namespace's name answers
  c.api.upsert('pods', pod('other', 'db-0', ['10.244.1.7']));
  await eventually(async () => assert.deepEqual(datas((await c.ask('10-244-1-7.other.pod.cluster.local', 'A')).packet.answers), ['10.244.1.7']));
  assert.equal((await c.ask('10-244-1-7.batch.pod.cluster.local', 'A')).packet.rcode, 'NXDOMAIN', 'the finished pod does not vouch for the reused IP');
});

test('--pods=insecure (default) answers any well-formed pod name without watching pods; disabled answers none', async (t) => {
  const insecure = await startCluster();
  t.after(() => insecure.stop());
  await waitSynced(insecure);
  assert.ok(!insecure.api.requests.some((r) => r.resource === 'pods'), 'pods are not watched');
  assert.deepEqual(datas((await insecure.ask('10-1-2-3.anything.pod.cluster.local', 'A')).packet.answers), ['10.1.2.3']);
  assert.equal((await insecure.ask('not-an-ip.anything.pod.cluster.local', 'A')).packet.rcode, 'NXDOMAIN');
  const disabled = await startCluster({ args: ['--pods=disabled'] });
  t.after(() => disabled.stop());
  await waitSynced(disabled);
  assert.equal((await disabled.ask('10-1-2-3.anything.pod.cluster.local', 'A')).packet.rcode, 'NXDOMAIN');
});
