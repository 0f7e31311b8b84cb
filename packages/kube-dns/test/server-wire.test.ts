// What reaches the wire from the real resolver and encoder: metric cardinality, names echoed as
// bytes, replies within limits. Real UDP/TCP sockets, real zone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildQuery, exchange } from '@kube-dns/dns-client';
import { clusterIP, port } from './resolve-fixtures.js';
import { startStack } from './server-stack.js';

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
