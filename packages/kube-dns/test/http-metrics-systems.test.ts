// Each answer counted under the system that did its work, end to end through the handler: PTR
// answers from the response cache stay `reverse`, an ExternalName's upstream lookup is timed as
// `recursive` (the auth latency alert blames kube-dns's own CPU), and a UDP answer cut with TC is
// the original's `cause="truncated"` error (a zone transfer never is).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { clusterIPService, endpointSlice, externalNameService, headlessService, startTestDnsServer } from '@kube-dns/testkit';
import * as dnsPacket from 'dns-packet';
import { Registry } from 'prom-client';
import { silentLogger } from '@kube-dns/config';
import { Zone } from '../src/records/zone.js';
import { parseTransferTo } from '../src/transfer/acl.js';
import { ZoneTransfer } from '../src/transfer/transfer.js';
import { startCluster, waitSynced } from './integration-helpers.js';
import { OPTS, clusterIP } from './resolve-fixtures.js';
import { startStack } from './server-stack.js';

const value = (body: string, series: string): number => {
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};

test('PTR hits count as reverse, an ExternalName chased upstream as recursive, a UDP answer with TC as truncated', async (t) => {
  const slow = await startTestDnsServer({ handler: async (q) => (await sleep(150), { answers: q.type === 'A' ? [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.10' }] : [] }) });
  t.after(() => slow.close());
  const c = await startCluster({
    forwardTimeoutMs: 2000,
    configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${slow.port}`]) },
    seed: (api) => {
      api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1'], [{ name: 'https', port: 443 }]));
      api.upsert('services', externalNameService('default', 'db', 'db.example.com'));
      api.upsert('services', headlessService('default', 'big', [{ name: 'http', port: 80 }]));
      api.upsert('endpointslices', endpointSlice('default', 'big', 'big-a', 'IPv4', Array.from({ length: 200 }, (_, i) => ({ ip: `10.1.${i >> 8}.${i & 255}` })), [{ name: 'http', port: 80 }]));
    },
  });
  t.after(() => c.stop());
  await waitSynced(c);
  const metrics = async () => (await c.http('/metrics')).body;
  const d = 'kubedns_dns_request_duration_seconds_count';

  const before = await metrics();
  for (let i = 0; i < 5; i++) assert.equal((await c.ask('1.0.0.10.in-addr.arpa', 'PTR')).packet.rcode, 'NOERROR');
  const afterPtr = await metrics();
  assert.ok(value(afterPtr, 'kubedns_dns_response_cache_hits_total') - value(before, 'kubedns_dns_response_cache_hits_total') >= 4, 'repeats came from the response cache');
  assert.equal(value(afterPtr, `${d}{transport="udp",system="reverse"}`) - value(before, `${d}{transport="udp",system="reverse"}`), 5);
  assert.equal(value(afterPtr, 'skydns_skydns_dns_request_count_total{system="reverse"}') - value(before, 'skydns_skydns_dns_request_count_total{system="reverse"}'), 5);

  for (let i = 0; i < 3; i++) assert.equal((await c.ask('db.default.svc.cluster.local', 'A')).packet.answers?.length, 2);
  const afterChase = await metrics();
  assert.equal(value(afterChase, `${d}{transport="udp",system="recursive"}`) - value(afterPtr, `${d}{transport="udp",system="recursive"}`), 3);
  assert.equal(value(afterChase, `${d}{transport="udp",system="auth"}`), value(afterPtr, `${d}{transport="udp",system="auth"}`), 'the 150 ms upstream is not kube-dns\'s own time');

  const cut = await c.ask('big.default.svc.cluster.local', 'A', { transport: 'udp' });
  assert.ok((cut.packet.flags ?? 0) & 0x200, 'TC');
  assert.equal(value(await metrics(), 'skydns_skydns_dns_error_count_total{system="auth",cause="truncated"}'), 1);
});

test('a zone transfer is never counted as truncated, whatever its ID (its reply is framed: the flags sit two octets further)', async (t) => {
  const zone = new Zone();
  zone.setService(clusterIP('default', 'web', ['10.0.0.1']));
  const xfr = new ZoneTransfer({ zone, cluster: { ...OPTS, serial: 7 }, external: [], log: silentLogger(), registry: new Registry() });
  xfr.setAcl(parseTransferTo('127.0.0.1'));
  t.after(() => xfr.stop());
  const s = await startStack({ zone, handler: { transfer: xfr } });
  t.after(s.stop);
  // IDs whose high octet has the bit TC has in the flags octet
  for (const id of [0x0200, 0x0300, 0x0600, 0xff00]) {
    const q = Buffer.from(dnsPacket.encode({ type: 'query', id, questions: [{ name: 'cluster.local', type: 'AXFR', class: 'IN' }] }));
    const r = (await s.handler.handle(q, 'tcp', '127.0.0.1', 5000)) as Buffer;
    assert.ok(dnsPacket.decode(r.subarray(2, 2 + r.readUInt16BE(0))).answers!.length >= 3, 'a transfer');
  }
  const body = await s.metrics.registry.metrics();
  assert.equal(value(body, 'skydns_skydns_dns_error_count_total{system="auth",cause="truncated"}'), 0, body.split('\n').filter((l) => l.includes('error_count')).join('\n'));
});
