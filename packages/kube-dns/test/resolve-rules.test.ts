// The resolver's rules (task brief 1-10), table-driven over one small cluster.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as dnsPacket from 'dns-packet';
import type { Zone } from '../src/records/zone.js';
import { clusterIP, ep, externalName, headless, lines, OPTS, port, q, slice, summary, zoneWith } from './resolve-fixtures.js';

const Z = 'cluster.local';
const SOA = `cluster.local 30 IN SOA ns.dns.cluster.local. hostmaster.cluster.local. ${OPTS.serial} 28800 7200 604800 30`;

function cluster(): Zone {
  const z = zoneWith(
    clusterIP('default', 'kubernetes', ['10.0.0.1'], [port('https', 443)]),
    clusterIP('default', 'dual', ['10.0.0.20', 'fd00::20'], [port('dns', 53, 'UDP'), port('dns-tcp', 53, 'TCP')]),
    clusterIP('default', 'v6only', ['fd00::30'], [port('http', 80), port('', 8080)]),
    clusterIP('default', 'noports', ['10.0.0.40']),
    headless('default', 'web'),
    headless('default', 'shared'),
    headless('default', 'portless'),
    headless('default', 'empty'),
    headless('default', 'v6hl'),
    headless('other', 'notready'),
    headless('other', 'pubnotready', true),
    externalName('default', 'ext', 'www.example.com'),
    externalName('default', 'extin', 'kubernetes.default.svc.cluster.local'),
    externalName('default', 'extchain', 'extin.default.svc.cluster.local'),
    externalName('default', 'extmissing', 'nothere.default.svc.cluster.local'),
    externalName('default', 'loop1', 'loop2.default.svc.cluster.local'),
    externalName('default', 'loop2', 'loop1.default.svc.cluster.local'),
    externalName('default', 'extip', '1.2.3.4'),
    externalName('default', 'extip6', '2001:db8::1'),
  );
  const http = [port('http', 80)];
  z.setSlice(slice('default', 'web-a', 'web', [ep('10.1.0.1', 'pet-0'), ep('10.1.0.2'), ep('10.1.0.3', '', false)], http));
  z.setSlice(slice('default', 'web-b', 'web', [ep('10.1.0.2')], http)); // same address in two slices
  z.setSlice(slice('default', 'web-c', 'web', [ep('fd00::1:1', 'pet-0')], http)); // dual-stack pet
  z.setSlice(slice('default', 'shared-a', 'shared', [ep('10.2.0.1', 'a'), ep('10.2.0.2', 'a')], [port('http', 80)]));
  z.setSlice(slice('default', 'portless-a', 'portless', [ep('10.3.0.1'), ep('10.3.0.2')]));
  z.setSlice(slice('default', 'v6hl-a', 'v6hl', [ep('fd00::2')], [port('grpc', 9000)]));
  z.setSlice(slice('other', 'notready-a', 'notready', [ep('10.4.0.1', '', false)], http));
  z.setSlice(slice('other', 'pubnotready-a', 'pubnotready', [ep('10.5.0.1', 'p', false)], http));
  return z;
}

const zone = cluster();
const NX = 'NXDOMAIN';
const NODATA = 'NOERROR';

// [name, type, summary(): rcode then sorted "TYPE data" answers]
const table: [string, string, string][] = [
  // 1. apex and structure names
  [Z, 'SOA', `NOERROR | SOA ns.dns.${Z}. hostmaster.${Z}. ${OPTS.serial} 28800 7200 604800 30`],
  [Z, 'NS', `NOERROR | NS ns.dns.${Z}.`],
  [Z, 'A', NODATA],
  [Z, 'TXT', NODATA],
  [`dns-version.${Z}`, 'TXT', 'NOERROR | TXT "1.1.0"'],
  [`dns-version.${Z}`, 'A', NODATA],
  [`x.dns-version.${Z}`, 'TXT', NX],
  [`ns.dns.${Z}`, 'A', NODATA],
  [`ns.dns.${Z}`, 'AAAA', NODATA],
  [`dns.${Z}`, 'A', NODATA],
  [`other.dns.${Z}`, 'A', NX],
  [`svc.${Z}`, 'A', NODATA],
  [`pod.${Z}`, 'A', NODATA],
  [`default.svc.${Z}`, 'A', NODATA],
  [`other.svc.${Z}`, 'SRV', NODATA],
  [`nons.svc.${Z}`, 'A', NX],
  [`foo.${Z}`, 'A', NX],
  [`a.b.c.${Z}`, 'A', NX],
  // 2. ClusterIP
  [`kubernetes.default.svc.${Z}`, 'A', 'NOERROR | A 10.0.0.1'],
  [`kubernetes.default.svc.${Z}`, 'AAAA', NODATA],
  [`kubernetes.default.svc.${Z}`, 'TXT', NODATA],
  [`kubernetes.default.svc.${Z}`, 'CNAME', NODATA],
  [`kubernetes.default.svc.${Z}`, 'MX', NODATA],
  [`kubernetes.default.svc.${Z}`, 'SRV', `NOERROR | SRV 10 100 443 kubernetes.default.svc.${Z}.`],
  [`_https._tcp.kubernetes.default.svc.${Z}`, 'SRV', `NOERROR | SRV 10 100 443 kubernetes.default.svc.${Z}.`],
  [`_https._tcp.kubernetes.default.svc.${Z}`, 'A', NODATA],
  [`_https._udp.kubernetes.default.svc.${Z}`, 'SRV', NX],
  [`_http._tcp.kubernetes.default.svc.${Z}`, 'SRV', NX],
  [`_tcp.kubernetes.default.svc.${Z}`, 'SRV', NODATA],
  [`_udp.kubernetes.default.svc.${Z}`, 'SRV', NX],
  [`x.kubernetes.default.svc.${Z}`, 'A', NX],
  [`10-0-0-1.kubernetes.default.svc.${Z}`, 'A', NX],
  [`a._https._tcp.kubernetes.default.svc.${Z}`, 'SRV', NX],
  [`nosuch.default.svc.${Z}`, 'A', NX],
  [`kubernetes.nons.svc.${Z}`, 'A', NX],
  [`dual.default.svc.${Z}`, 'A', 'NOERROR | A 10.0.0.20'],
  [`dual.default.svc.${Z}`, 'AAAA', 'NOERROR | AAAA fd00::20'],
  [`_dns._udp.dual.default.svc.${Z}`, 'SRV', `NOERROR | SRV 10 100 53 dual.default.svc.${Z}.`],
  // two ports share the number: one SRV on the bare name
  [`dual.default.svc.${Z}`, 'SRV', `NOERROR | SRV 10 100 53 dual.default.svc.${Z}.`],
  [`v6only.default.svc.${Z}`, 'AAAA', 'NOERROR | AAAA fd00::30'],
  [`v6only.default.svc.${Z}`, 'A', NODATA],
  [
    `v6only.default.svc.${Z}`,
    'SRV',
    `NOERROR | SRV 10 50 80 v6only.default.svc.${Z}. | SRV 10 50 8080 v6only.default.svc.${Z}.`,
  ],
  [`noports.default.svc.${Z}`, 'SRV', NODATA],
  [`_tcp.noports.default.svc.${Z}`, 'SRV', NX],
  // 3. headless
  [`web.default.svc.${Z}`, 'A', 'NOERROR | A 10.1.0.1 | A 10.1.0.2'],
  [`web.default.svc.${Z}`, 'AAAA', 'NOERROR | AAAA fd00::1:1'],
  [`web.default.svc.${Z}`, 'TXT', NODATA],
  [`pet-0.web.default.svc.${Z}`, 'A', 'NOERROR | A 10.1.0.1'],
  [`pet-0.web.default.svc.${Z}`, 'AAAA', 'NOERROR | AAAA fd00::1:1'],
  [`pet-0.web.default.svc.${Z}`, 'SRV', NODATA],
  [`10-1-0-2.web.default.svc.${Z}`, 'A', 'NOERROR | A 10.1.0.2'],
  [`10-1-0-1.web.default.svc.${Z}`, 'A', NX], // named by its hostname
  [`10-1-0-3.web.default.svc.${Z}`, 'A', NX], // not ready
  [`pet-1.web.default.svc.${Z}`, 'A', NX],
  [
    `_http._tcp.web.default.svc.${Z}`,
    'SRV',
    `NOERROR | SRV 10 50 80 10-1-0-2.web.default.svc.${Z}. | SRV 10 50 80 pet-0.web.default.svc.${Z}.`,
  ],
  [
    `web.default.svc.${Z}`,
    'SRV',
    `NOERROR | SRV 10 50 80 10-1-0-2.web.default.svc.${Z}. | SRV 10 50 80 pet-0.web.default.svc.${Z}.`,
  ],
  [`_http._tcp.web.default.svc.${Z}`, 'A', NODATA],
  [`_https._tcp.web.default.svc.${Z}`, 'SRV', NX],
  [`_tcp.web.default.svc.${Z}`, 'SRV', NODATA],
  [`_udp.web.default.svc.${Z}`, 'SRV', NX],
  [`x.pet-0.web.default.svc.${Z}`, 'A', NX],
  [`a.shared.default.svc.${Z}`, 'A', 'NOERROR | A 10.2.0.1 | A 10.2.0.2'],
  [`_http._tcp.shared.default.svc.${Z}`, 'SRV', `NOERROR | SRV 10 100 80 a.shared.default.svc.${Z}.`],
  [
    `portless.default.svc.${Z}`,
    'SRV',
    `NOERROR | SRV 10 50 0 10-3-0-1.portless.default.svc.${Z}. | SRV 10 50 0 10-3-0-2.portless.default.svc.${Z}.`,
  ],
  [`_tcp.portless.default.svc.${Z}`, 'SRV', NX],
  [`empty.default.svc.${Z}`, 'A', NX],
  [`empty.default.svc.${Z}`, 'SRV', NX],
  [`v6hl.default.svc.${Z}`, 'AAAA', 'NOERROR | AAAA fd00::2'],
  [`fd00--2.v6hl.default.svc.${Z}`, 'AAAA', 'NOERROR | AAAA fd00::2'],
  [`_grpc._tcp.v6hl.default.svc.${Z}`, 'SRV', `NOERROR | SRV 10 100 9000 fd00--2.v6hl.default.svc.${Z}.`],
  [`notready.other.svc.${Z}`, 'A', NX],
  [`_http._tcp.notready.other.svc.${Z}`, 'SRV', NX],
  [`pubnotready.other.svc.${Z}`, 'A', 'NOERROR | A 10.5.0.1'],
  [`p.pubnotready.other.svc.${Z}`, 'A', 'NOERROR | A 10.5.0.1'],
  // 4. ExternalName
  [`ext.default.svc.${Z}`, 'CNAME', 'NOERROR | CNAME www.example.com.'],
  [`ext.default.svc.${Z}`, 'A', 'NOERROR | CNAME www.example.com.'],
  [`ext.default.svc.${Z}`, 'SRV', 'NOERROR | CNAME www.example.com.'],
  [`x.ext.default.svc.${Z}`, 'A', NX],
  [`extin.default.svc.${Z}`, 'A', `NOERROR | A 10.0.0.1 | CNAME kubernetes.default.svc.${Z}.`],
  [`extin.default.svc.${Z}`, 'AAAA', `NOERROR | CNAME kubernetes.default.svc.${Z}.`],
  [`extin.default.svc.${Z}`, 'CNAME', `NOERROR | CNAME kubernetes.default.svc.${Z}.`],
  [
    `extchain.default.svc.${Z}`,
    'A',
    `NOERROR | A 10.0.0.1 | CNAME extin.default.svc.${Z}. | CNAME kubernetes.default.svc.${Z}.`,
  ],
  [`extmissing.default.svc.${Z}`, 'A', `NXDOMAIN | CNAME nothere.default.svc.${Z}.`],
  [
    `loop1.default.svc.${Z}`,
    'A',
    `NOERROR | CNAME loop1.default.svc.${Z}. | CNAME loop2.default.svc.${Z}.`,
  ],
  [`extip.default.svc.${Z}`, 'A', 'NOERROR | A 1.2.3.4'],
  [`extip.default.svc.${Z}`, 'AAAA', NODATA],
  [`extip.default.svc.${Z}`, 'CNAME', NODATA],
  [`extip6.default.svc.${Z}`, 'AAAA', 'NOERROR | AAAA 2001:db8::1'],
  // 5. pods (insecure)
  [`10-1-2-3.default.pod.${Z}`, 'A', 'NOERROR | A 10.1.2.3'],
  [`10-1-2-3.anything.pod.${Z}`, 'A', 'NOERROR | A 10.1.2.3'],
  [`10-1-2-3.default.pod.${Z}`, 'AAAA', NODATA],
  [`10-1-2-3.default.pod.${Z}`, 'SRV', NODATA], // the original crashes here
  [`10-1-2-3.default.pod.${Z}`, 'PTR', NODATA],
  [`fd00--1.default.pod.${Z}`, 'AAAA', 'NOERROR | AAAA fd00::1'],
  [`fd00--1.default.pod.${Z}`, 'A', NODATA],
  [`bogus.default.pod.${Z}`, 'A', NX],
  [`x.10-1-2-3.default.pod.${Z}`, 'A', NX],
  [`default.pod.${Z}`, 'A', NODATA],
  // 6. reverse
  ['1.0.0.10.in-addr.arpa', 'PTR', `NOERROR | PTR kubernetes.default.svc.${Z}.`],
  ['20.0.0.10.in-addr.arpa', 'PTR', `NOERROR | PTR dual.default.svc.${Z}.`],
  ['0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa', 'PTR', `NOERROR | PTR dual.default.svc.${Z}.`],
  ['1.0.1.10.in-addr.arpa', 'PTR', `NOERROR | PTR pet-0.web.default.svc.${Z}.`],
  ['2.0.1.10.in-addr.arpa', 'PTR', `NOERROR | PTR 10-1-0-2.web.default.svc.${Z}.`],
  ['1.0.0.0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa', 'PTR', `NOERROR | PTR pet-0.web.default.svc.${Z}.`],
  ['3.0.1.10.in-addr.arpa', 'PTR', 'forward cluster'], // not ready
  ['1.0.4.10.in-addr.arpa', 'PTR', 'forward cluster'], // not ready, other service
  ['1.0.5.10.in-addr.arpa', 'PTR', `NOERROR | PTR p.pubnotready.other.svc.${Z}.`],
  ['4.3.2.1.in-addr.arpa', 'PTR', 'forward cluster'], // ExternalName IPs have no PTR
  ['9.9.9.9.in-addr.arpa', 'PTR', 'forward cluster'],
  ['1.0.0.10.in-addr.arpa', 'A', 'forward cluster'],
  ['0.0.10.in-addr.arpa', 'PTR', 'forward cluster'],
  ['in-addr.arpa', 'SOA', 'forward cluster'],
  ['x.ip6.arpa', 'PTR', 'forward cluster'],
  // 7. outside
  ['example.com', 'A', 'forward'],
  ['local', 'SOA', 'forward'],
  ['xcluster.local', 'A', 'forward'],
  ['', 'NS', 'forward'],
  // 9. wildcards
  [
    `*.default.svc.${Z}`,
    'A',
    'NOERROR | A 10.0.0.1 | A 10.0.0.20 | A 10.0.0.40 | A 10.1.0.1 | A 10.1.0.2 | A 10.2.0.1 | A 10.2.0.2 | A 10.3.0.1 | A 10.3.0.2',
  ],
  [`kubernetes.*.svc.${Z}`, 'A', 'NOERROR | A 10.0.0.1'],
  [`*.kubernetes.default.svc.${Z}`, 'A', 'NOERROR | A 10.0.0.1'],
  [`*.web.default.svc.${Z}`, 'A', 'NOERROR | A 10.1.0.1 | A 10.1.0.2'],
  [`*.*.svc.${Z}`, 'A', 'NOERROR | A 10.0.0.1 | A 10.0.0.20 | A 10.0.0.40 | A 10.1.0.1 | A 10.1.0.2 | A 10.2.0.1 | A 10.2.0.2 | A 10.3.0.1 | A 10.3.0.2 | A 10.5.0.1'],
  [
    `_http._tcp.*.default.svc.${Z}`,
    'SRV',
    `NOERROR | SRV 10 25 80 10-1-0-2.web.default.svc.${Z}. | SRV 10 25 80 a.shared.default.svc.${Z}. | SRV 10 25 80 pet-0.web.default.svc.${Z}. | SRV 10 25 80 v6only.default.svc.${Z}.`,
  ],
  [`*._tcp.kubernetes.default.svc.${Z}`, 'SRV', `NOERROR | SRV 10 100 443 kubernetes.default.svc.${Z}.`],
  [`_https.*.kubernetes.default.svc.${Z}`, 'SRV', `NOERROR | SRV 10 100 443 kubernetes.default.svc.${Z}.`],
  [`*.*.dual.default.svc.${Z}`, 'SRV', `NOERROR | SRV 10 100 53 dual.default.svc.${Z}.`],
  [`*.nons.svc.${Z}`, 'A', NX],
  [`ext.*.svc.${Z}`, 'A', NX], // ExternalName services do not match wildcards
  [`*.svc.${Z}`, 'A', NODATA],
];

test('resolution table (rules 1-9)', () => {
  for (const [name, type, want] of table) {
    assert.equal(summary(q(zone, name, type)), want, `${name} ${type}`);
  }
});

test('every in-zone and reverse answer is authoritative with the SOA on negatives', () => {
  for (const [name, type] of table) {
    const r = q(zone, name, type);
    if (r.action === 'forward') {
      assert.equal(r.answers.length + r.authorities.length + r.additionals.length, 0, name);
      continue;
    }
    assert.equal(r.aa, true, `${name} ${type} aa`);
    assert.equal(r.cluster, true, `${name} ${type} cluster`);
    // (CNAME-only answers are checked in the ExternalName tests)
    if (r.rcode === 'NXDOMAIN' || r.answers.length === 0) assert.deepEqual(lines(r.authorities), [SOA], `${name} ${type}`);
    else if (r.answers.some((a) => a.type !== 'CNAME')) assert.deepEqual(r.authorities, [], `${name} ${type}`);
    for (const a of [...r.answers, ...r.additionals]) assert.equal((a as { ttl?: number }).ttl, 30, `${name} ${type} ttl`);
  }
});

test('forwarded names: cluster flag tells reverse zones from the outside world', () => {
  assert.equal(q(zone, 'example.com', 'A').cluster, false);
  assert.equal(q(zone, '9.9.9.9.in-addr.arpa', 'PTR').cluster, true);
  assert.equal(q(zone, 'ip6.arpa', 'NS').cluster, true);
});

test('SRV additionals carry the targets’ addresses, both families, lower-case owners', () => {
  const r = q(zone, `_HTTP._TCP.Web.Default.svc.${Z}`, 'SRV');
  assert.deepEqual(lines(r.additionals).sort(), [
    `10-1-0-2.web.default.svc.${Z} 30 IN A 10.1.0.2`,
    `pet-0.web.default.svc.${Z} 30 IN A 10.1.0.1`,
    `pet-0.web.default.svc.${Z} 30 IN AAAA fd00::1:1`,
  ]);
  const d = q(zone, `_dns._udp.dual.default.svc.${Z}`, 'SRV');
  assert.deepEqual(lines(d.additionals).sort(), [
    `dual.default.svc.${Z} 30 IN A 10.0.0.20`,
    `dual.default.svc.${Z} 30 IN AAAA fd00::20`,
  ]);
  const bare = q(zone, `kubernetes.default.svc.${Z}`, 'SRV');
  assert.deepEqual(lines(bare.additionals), [`kubernetes.default.svc.${Z} 30 IN A 10.0.0.1`]);
  assert.deepEqual(lines(q(zone, `kubernetes.default.svc.${Z}`, 'A').additionals), []);
});

test('owner names echo the question’s case; other names are lower-case', () => {
  const name = `KuberNetes.Default.SVC.Cluster.Local`;
  assert.deepEqual(lines(q(zone, name, 'A').answers), [`${name} 30 IN A 10.0.0.1`]);
  const srv = q(zone, `_HTTPS._Tcp.${name}`, 'SRV');
  assert.deepEqual(lines(srv.answers), [`_HTTPS._Tcp.${name} 30 IN SRV 10 100 443 kubernetes.default.svc.${Z}.`]);
  assert.deepEqual(lines(srv.additionals), [`kubernetes.default.svc.${Z} 30 IN A 10.0.0.1`]);
  const cn = q(zone, `ExtIn.default.svc.${Z}`, 'A');
  assert.deepEqual(lines(cn.answers), [
    `ExtIn.default.svc.${Z} 30 IN CNAME kubernetes.default.svc.${Z}.`,
    `kubernetes.default.svc.${Z} 30 IN A 10.0.0.1`,
  ]);
  const ptr = q(zone, '1.0.0.10.IN-ADDR.arpa', 'PTR');
  assert.deepEqual(lines(ptr.answers), [`1.0.0.10.IN-ADDR.arpa 30 IN PTR kubernetes.default.svc.${Z}.`]);
  assert.deepEqual(lines(q(zone, 'Cluster.LOCAL', 'SOA').answers)[0]?.split(' ')[0], 'Cluster.LOCAL');
  assert.equal(lines(q(zone, 'Cluster.LOCAL', 'A').authorities)[0], SOA); // SOA owner is the zone
  assert.equal(summary(q(zone, `Dns-Version.${Z}`, 'txt')), 'NOERROR | TXT "1.1.0"');
  // a trailing dot is tolerated
  assert.deepEqual(lines(q(zone, `kubernetes.default.svc.${Z}.`, 'A').answers), [`kubernetes.default.svc.${Z} 30 IN A 10.0.0.1`]);
});

test('ExternalName: outside targets are left to the server (chase), in-zone ones are not', () => {
  const out = q(zone, `ext.default.svc.${Z}`, 'AAAA');
  assert.equal(out.chase, 'www.example.com');
  assert.equal(out.rcode, 'NOERROR');
  assert.deepEqual(out.authorities, []);
  assert.equal(q(zone, `ext.default.svc.${Z}`, 'CNAME').chase, undefined);
  assert.equal(q(zone, `extin.default.svc.${Z}`, 'A').chase, undefined);
  assert.equal(q(zone, `extip.default.svc.${Z}`, 'A').chase, undefined);
  // in-zone chain ending in NODATA / NXDOMAIN keeps the SOA
  assert.deepEqual(lines(q(zone, `extin.default.svc.${Z}`, 'AAAA').authorities), [SOA]);
  assert.deepEqual(lines(q(zone, `extmissing.default.svc.${Z}`, 'A').authorities), [SOA]);
  // a chain in the zone that leaves it: chase the final target
  const z2 = zoneWith(externalName('a', 'one', 'two.a.svc.cluster.local'), externalName('a', 'two', 'Example.org'.toLowerCase()));
  const r = q(z2, 'one.a.svc.cluster.local', 'A');
  assert.equal(summary(r), 'NOERROR | CNAME example.org. | CNAME two.a.svc.cluster.local.');
  assert.equal(r.chase, 'example.org');
});

test('ExternalName chains: 8 CNAMEs are followed, longer chains stop', () => {
  const chain = (len: number): Zone => {
    const z = zoneWith(clusterIP('c', 'end', ['10.9.9.9']));
    for (let i = 0; i < len; i++) {
      const next = i === len - 1 ? 'end' : `c${i + 1}`;
      z.setService(externalName('c', `c${i}`, `${next}.c.svc.cluster.local`));
    }
    return z;
  };
  const ok = q(chain(8), 'c0.c.svc.cluster.local', 'A');
  assert.equal(ok.answers.filter((a) => a.type === 'CNAME').length, 8);
  assert.deepEqual(summary(ok).split(' | ').filter((x) => x.startsWith('A ')), ['A 10.9.9.9']);
  const long = q(chain(12), 'c0.c.svc.cluster.local', 'A');
  assert.equal(long.rcode, 'NOERROR');
  assert.equal(long.answers.filter((a) => a.type === 'A').length, 0);
  assert.ok(long.answers.length <= 9, `stopped after ${long.answers.length} records`);
  // a self-loop
  const self = zoneWith(externalName('s', 'me', 'me.s.svc.cluster.local'));
  assert.equal(summary(q(self, 'me.s.svc.cluster.local', 'A')), 'NOERROR | CNAME me.s.svc.cluster.local.');
});

test('one resolution leaves nothing behind for the next: a chain asked again, a loop then a plain name', () => {
  // the top-level question object is reused between resolutions (resolve.ts, resolveTop): the
  // chain's loop guard and depth, and the owner's spelling, must start afresh every time
  const z = zoneWith(clusterIP('c', 'end', ['10.9.9.9']), externalName('c', 'c0', 'c1.c.svc.cluster.local'), externalName('c', 'c1', 'end.c.svc.cluster.local'));
  z.setService(externalName('s', 'me', 'me.s.svc.cluster.local'));
  const first = summary(q(z, 'c0.c.svc.cluster.local', 'A'));
  assert.ok(first.includes('A 10.9.9.9'), first);
  for (let i = 0; i < 3; i++) assert.equal(summary(q(z, 'c0.c.svc.cluster.local', 'A')), first);
  assert.equal(summary(q(z, 'me.s.svc.cluster.local', 'A')), 'NOERROR | CNAME me.s.svc.cluster.local.');
  assert.equal(summary(q(z, 'c0.c.svc.cluster.local', 'A')), first);
  const mixed = q(z, 'End.C.svc.cluster.local', 'A');
  assert.deepEqual(mixed.answers.map((a) => a.name), ['End.C.svc.cluster.local']);
});

test('pods: verified mode needs a pod with that IP in that namespace; disabled answers nothing', () => {
  const z = zoneWith();
  z.setPod({ namespace: 'default', name: 'p1', ips: ['10.1.2.3', 'fd00::1'] });
  z.setPod({ namespace: 'default', name: 'hostnet', ips: ['192.168.0.1'] });
  z.setPod({ namespace: 'kube-system', name: 'hostnet2', ips: ['192.168.0.1'] });
  const v = { pods: 'verified' as const };
  assert.equal(summary(q(z, `10-1-2-3.default.pod.${Z}`, 'A', v)), 'NOERROR | A 10.1.2.3');
  assert.equal(summary(q(z, `fd00--1.default.pod.${Z}`, 'AAAA', v)), 'NOERROR | AAAA fd00::1');
  assert.equal(summary(q(z, `10-1-2-3.default.pod.${Z}`, 'SRV', v)), NODATA);
  assert.equal(summary(q(z, `10-1-2-3.other.pod.${Z}`, 'A', v)), NX);
  assert.equal(summary(q(z, `10-1-2-4.default.pod.${Z}`, 'A', v)), NX);
  assert.equal(summary(q(z, `default.pod.${Z}`, 'A', v)), NODATA);
  assert.equal(summary(q(z, `other.pod.${Z}`, 'A', v)), NX);
  assert.equal(q(z, `10-1-2-3.default.pod.${Z}`, 'A', v).dep, '*');
  // two pods share an IP (host network): deleting one keeps the name
  z.deletePod('default', 'hostnet');
  assert.equal(summary(q(z, `192-168-0-1.kube-system.pod.${Z}`, 'A', v)), 'NOERROR | A 192.168.0.1');
  assert.equal(summary(q(z, `192-168-0-1.default.pod.${Z}`, 'A', v)), NX);
  // a pod's IPs change
  z.setPod({ namespace: 'default', name: 'p1', ips: ['10.1.2.5'] });
  assert.equal(summary(q(z, `10-1-2-3.default.pod.${Z}`, 'A', v)), NX);
  assert.equal(summary(q(z, `10-1-2-5.default.pod.${Z}`, 'A', v)), 'NOERROR | A 10.1.2.5');
  z.deletePod('default', 'p1');
  assert.equal(summary(q(z, `default.pod.${Z}`, 'A', v)), NX);

  const d = { pods: 'disabled' as const };
  assert.equal(summary(q(z, `10-1-2-3.default.pod.${Z}`, 'A', d)), NX);
  assert.equal(summary(q(z, `default.pod.${Z}`, 'A', d)), NX);
  assert.equal(summary(q(z, `pod.${Z}`, 'A', d)), NODATA);
});

test('dependencies name what an answer can change with (rule 10)', () => {
  const deps: [string, string, string][] = [
    [Z, 'SOA', 'static'],
    [`dns-version.${Z}`, 'TXT', 'static'],
    [`foo.${Z}`, 'A', 'static'],
    [`10-1-2-3.default.pod.${Z}`, 'A', 'static'],
    [`bogus.default.pod.${Z}`, 'A', 'static'],
    [`default.svc.${Z}`, 'A', '*'],
    [`kubernetes.default.svc.${Z}`, 'A', 'svc/default/kubernetes'],
    [`_https._tcp.kubernetes.default.svc.${Z}`, 'SRV', 'svc/default/kubernetes'],
    [`x.y.kubernetes.default.svc.${Z}`, 'SRV', 'svc/default/kubernetes'],
    [`nosuch.default.svc.${Z}`, 'A', 'svc/default/nosuch'],
    [`pet-0.web.default.svc.${Z}`, 'A', 'svc/default/web'],
    [`empty.default.svc.${Z}`, 'A', 'svc/default/empty'],
    [`ext.default.svc.${Z}`, 'A', 'svc/default/ext'],
    [`extin.default.svc.${Z}`, 'A', '*'],
    ['1.0.0.10.in-addr.arpa', 'PTR', '*'],
    ['9.9.9.9.in-addr.arpa', 'PTR', '*'],
    // a wildcard over one namespace changes with that namespace only (cached across other changes)
    [`*.default.svc.${Z}`, 'A', 'ns/default'],
    [`kubernetes.*.svc.${Z}`, 'A', 'name/kubernetes'],
    [`*.*.svc.${Z}`, 'A', '*'],
    [`*.kubernetes.default.svc.${Z}`, 'A', 'svc/default/kubernetes'],
    ['example.com', 'A', 'static'],
  ];
  for (const [name, type, dep] of deps) assert.equal(q(zone, name, type).dep, dep, `${name} ${type}`);
});

test('other zone names work the same', () => {
  const z = zoneWith(clusterIP('default', 'kubernetes', ['10.0.0.1']));
  const opts = { zone: 'corp.example' };
  assert.equal(summary(q(z, 'kubernetes.default.svc.corp.example', 'A', opts)), 'NOERROR | A 10.0.0.1');
  assert.equal(q(z, 'kubernetes.default.svc.cluster.local', 'A', opts).action, 'forward');
  assert.equal(summary(q(z, '1.0.0.10.in-addr.arpa', 'PTR', opts)), 'NOERROR | PTR kubernetes.default.svc.corp.example.');
  assert.equal(
    lines(q(z, 'nope.corp.example', 'A', opts).authorities)[0],
    `corp.example 30 IN SOA ns.dns.corp.example. hostmaster.corp.example. ${OPTS.serial} 28800 7200 604800 30`,
  );
});

test('every resolution encodes with dns-packet and decodes to the same records', () => {
  for (const [name, type] of table) {
    const r = q(zone, name, type);
    if (r.action === 'forward') continue;
    const bytes = dnsPacket.encode({
      type: 'response',
      id: 1,
      flags: dnsPacket.AUTHORITATIVE_ANSWER,
      questions: [{ name, type: type as dnsPacket.RecordType, class: 'IN' }],
      answers: r.answers,
      authorities: r.authorities,
      additionals: r.additionals,
    });
    const back = dnsPacket.decode(bytes);
    assert.deepEqual(lines(back.answers ?? []), lines(r.answers), `${name} ${type}`);
    assert.deepEqual(lines(back.authorities ?? []), lines(r.authorities), `${name} ${type}`);
    assert.deepEqual(lines(back.additionals ?? []), lines(r.additionals), `${name} ${type}`);
  }
});
