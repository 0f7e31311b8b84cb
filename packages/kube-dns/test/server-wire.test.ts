// What reaches the wire from the real resolver and encoder: metric cardinality, names echoed as
// bytes, replies within limits. Real UDP/TCP sockets, real zone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildQuery, exchange } from '@kube-dns/dns-client';
import { clusterIP, port } from './resolve-fixtures.js';
import { startStack } from './server-stack.js';
import { labelsOf, rawQuery, sameLabels, walkReply } from './wire-check.js';

test('qtypes a client makes up are counted under one "other" label, not one series each', async (t) => {
  const s = await startStack();
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'web', ['10.0.0.5'], [port('http', 80)]));
  const base = buildQuery({ name: 'web.default.svc.cluster.local', type: 'A' });
  for (let qtype = 1000; qtype < 1300; qtype++) {
    const q = Buffer.from(base);
    q.writeUInt16BE(qtype, q.length - 4);
    const r = await exchange(s.server, q, 'udp', 2000);
    assert.equal(r.readUInt16BE(0), q.readUInt16BE(0));
  }
  await exchange(s.server, base, 'udp', 2000);
  const text = await s.metrics.registry.metrics();
  const series = text.split('\n').filter((l) => l.startsWith('kubedns_dns_requests_total{'));
  assert.deepEqual(
    series.sort(),
    ['kubedns_dns_requests_total{qtype="A",rcode="NOERROR",transport="udp"} 1', 'kubedns_dns_requests_total{qtype="other",rcode="NOERROR",transport="udp"} 300'],
  );
});

test('names are echoed as bytes: 0x20 case, non-ASCII octets and a 63-octet label of 0xFF come back exactly', async (t) => {
  const s = await startStack();
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'web', ['10.0.0.5'], [port('http', 80)]));
  const ff63 = Buffer.alloc(63, 0xff);
  const cases: Buffer[][] = [
    labelsOf('WeB.DeFaUlT.sVc.ClUsTeR.LoCaL'),
    [Buffer.from('1-2-3-4'), Buffer.from([0xff, 0xfe]), ...labelsOf('pod.cluster.local')],
    [Buffer.from('1-2-3-4'), ff63, ...labelsOf('pod.cluster.local')],
    // two namespaces differing only in non-ASCII "case" (0xC0 vs 0xE0) are different names
    [Buffer.from('10-0-0-1'), Buffer.from([0xc0]), ...labelsOf('pod.cluster.local')],
    [Buffer.from('10-0-0-1'), Buffer.from([0xe0]), ...labelsOf('pod.cluster.local')],
    [Buffer.from('nosuch'), Buffer.from([0xc3, 0xbf]), ...labelsOf('svc.cluster.local')],
  ];
  for (const labels of cases) {
    // twice: the second reply comes from the response cache
    for (const transport of ['udp', 'tcp', 'udp'] as const) {
      const id = Math.floor(Math.random() * 65535);
      const reply = await exchange(s.server, rawQuery(id, labels, 1, 1232), transport, 2000);
      const w = walkReply(reply);
      const shown = labels.map((l) => l.toString('hex')).join('.');
      assert.equal(w.id, id);
      assert.ok(sameLabels(w.question, labels), `question echoed exactly for ${shown}`);
      for (const r of w.records) {
        if (r.section === 'answer') assert.ok(sameLabels(r.owner, labels), `answer owner is the question's bytes for ${shown}`);
      }
      if (shown.startsWith(Buffer.from('1-2-3-4').toString('hex')) || shown.startsWith(Buffer.from('10-0-0-1').toString('hex'))) {
        assert.equal(w.records.filter((r) => r.section === 'answer').length, 1, `an A record for ${shown}`);
      }
    }
  }
});
