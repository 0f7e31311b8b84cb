// A forwarding loop (a node resolv.conf pointing at the cluster DNS): an upstream that sends our queries back to us, as a
// node resolv.conf pointing at the cluster DNS does. kube-dns must notice, drop that upstream,
// say so, and keep answering through the others.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { datas, exchange } from '@kube-dns/dns-client';
import { startTestDnsServer } from '@kube-dns/testkit';
import { editConfig, eventually, startCluster, waitSynced } from './integration-helpers.js';

test('an upstream that hands queries back to kube-dns is detected and dropped; the honest one keeps answering', async (t) => {
  let kubeDnsPort = 0;
  // the looping upstream: a "resolver" whose own upstream is kube-dns
  const looping = await startTestDnsServer({
    handler: async (q) => {
      if (!kubeDnsPort) return { rcode: 'SERVFAIL' };
      const { buildQuery } = await import('@kube-dns/dns-client');
      const reply = await exchange({ host: '127.0.0.1', port: kubeDnsPort }, buildQuery({ name: q.name, type: q.type as 'A' }), 'udp', 3000).catch(() => undefined);
      return reply ? { rcode: (reply.readUInt16BE(2) & 0xf) === 3 ? 'NXDOMAIN' : 'SERVFAIL' } : 'drop';
    },
  });
  t.after(() => looping.close());
  const honest = await startTestDnsServer({ answerIp: '192.0.2.44' });
  t.after(() => honest.close());

  const c = await startCluster();
  t.after(() => c.stop());
  kubeDnsPort = c.server.port;
  await waitSynced(c);
  // the looping server first, as a misconfigured node would list it
  await editConfig(c, 'upstreamNameservers', JSON.stringify([`127.0.0.1:${looping.port}`, `127.0.0.1:${honest.port}`]));
  await eventually(async () => assert.match((await c.http('/metrics')).body, /^kubedns_forward_loops_detected_total 1$/m), 5000);
  assert.match((await c.http('/metrics')).body, /^kubedns_forward_loops_active 1$/m, 'the state an alert reads, whenever the loop was found');
  assert.ok(looping.questions.some((q) => q.name.endsWith('loop-check.kube-dns.invalid')), 'the probe went through the looping upstream');

  const before = looping.questions.length;
  const r = await c.ask('www.example.net', 'A');
  assert.deepEqual(datas(r.packet.answers), ['192.0.2.44']);
  assert.equal(looping.questions.length, before, 'the looping upstream is no longer used');

  // a ConfigMap change re-checks: fixing the config brings forwarding back to normal
  await editConfig(c, 'upstreamNameservers', JSON.stringify([`127.0.0.1:${honest.port}`]));
  await eventually(async () => assert.deepEqual(datas((await c.ask('again.example.net', 'A')).packet.answers), ['192.0.2.44']), 3000);
  await eventually(async () => assert.match((await c.http('/metrics')).body, /^kubedns_forward_loops_active 0$/m, 'nothing dropped once the config changed'), 5000);
});

test('honest upstreams are never flagged as loops', async (t) => {
  const honest = await startTestDnsServer({ answerIp: '192.0.2.45' });
  t.after(() => honest.close());
  const c = await startCluster({ configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${honest.port}`]) } });
  t.after(() => c.stop());
  await waitSynced(c);
  await eventually(async () => assert.ok(honest.questions.some((q) => q.name.endsWith('loop-check.kube-dns.invalid')), 'probed'), 3000);
  assert.match((await c.http('/metrics')).body, /^kubedns_forward_loops_detected_total 0$/m);
  assert.deepEqual(datas((await c.ask('www.example.net', 'A')).packet.answers), ['192.0.2.45']);
});
