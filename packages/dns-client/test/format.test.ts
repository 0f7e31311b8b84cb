// Records printed the way dig prints them: what logs and test assertions compare against.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as dnsPacket from 'dns-packet';
import { datas, rdataText, rrText } from '@kube-dns/dns-client';

const rr = (r: Record<string, unknown>) => r as unknown as dnsPacket.Answer;

test('rdataText prints each record type as dig does', () => {
  assert.equal(rdataText(rr({ type: 'A', name: 'a', data: '10.0.0.1' })), '10.0.0.1');
  assert.equal(rdataText(rr({ type: 'AAAA', name: 'a', data: '2001:db8::1' })), '2001:db8::1');
  assert.equal(rdataText(rr({ type: 'CNAME', name: 'a', data: 'b.example' })), 'b.example.');
  assert.equal(rdataText(rr({ type: 'PTR', name: 'a', data: 'svc.ns.svc.cluster.local' })), 'svc.ns.svc.cluster.local.');
  assert.equal(rdataText(rr({ type: 'SRV', name: 'a', data: { priority: 10, weight: 100, port: 443, target: 'web.ns.svc.cluster.local' } })), '10 100 443 web.ns.svc.cluster.local.');
  assert.equal(rdataText(rr({ type: 'SRV', name: 'a', data: { port: 53, target: 't' } })), '0 0 53 t.');
  assert.equal(rdataText(rr({ type: 'TXT', name: 'a', data: [Buffer.from('1.1.0')] })), '"1.1.0"');
  assert.equal(rdataText(rr({ type: 'TXT', name: 'a', data: ['a b', 'c"d'] })), '"a b" "c\\"d"');
  assert.equal(
    rdataText(rr({ type: 'SOA', name: 'a', data: { mname: 'ns.dns.cluster.local', rname: 'hostmaster.cluster.local', serial: 1, refresh: 28800, retry: 7200, expire: 604800, minimum: 60 } })),
    'ns.dns.cluster.local. hostmaster.cluster.local. 1 28800 7200 604800 60',
  );
});

test('rrText prints name, TTL, class, type and data', () => {
  assert.equal(rrText(rr({ type: 'A', name: 'kubernetes.default.svc.cluster.local', ttl: 30, class: 'IN', data: '10.96.0.1' })), 'kubernetes.default.svc.cluster.local.\t30\tIN\tA\t10.96.0.1');
});

test('datas filters by type and leaves OPT out', () => {
  const section = [
    rr({ type: 'A', name: 'a', data: '10.0.0.1' }),
    rr({ type: 'OPT', name: '.', udpPayloadSize: 1232 }),
    rr({ type: 'AAAA', name: 'a', data: '::1' }),
  ];
  assert.deepEqual(datas(section), ['10.0.0.1', '::1']);
  assert.deepEqual(datas(section, 'AAAA'), ['::1']);
  assert.deepEqual(datas(undefined), []);
});
