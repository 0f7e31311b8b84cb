import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as dnsPacket from 'dns-packet';
import {
  dashedLabel,
  fitsInMessage,
  ipToReverseName,
  lastDot,
  normalizeIp,
  parseDashedIp,
  reverseNameToIp,
} from '../src/records/names.js';

const V6_NIBBLES_FULL = 'b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.1.0.0.0.0.0.0.0.1.2.3.4';

test('reverse names → IPs (as in the kubernetes/dns tests, valid cases)', () => {
  const cases: [string, string][] = [
    ['255.2.0.192.in-addr.arpa.', '192.0.2.255'],
    ['255.2.0.192.in-addr.arpa', '192.0.2.255'],
    ['1.0.0.10.IN-ADDR.ARPA', '10.0.0.1'],
    ['b.a.9.8.7.6.5.0.4.0.0.0.3.0.0.0.2.0.0.0.0.0.0.0.0.0.0.0.1.2.3.4.ip6.arpa.', '4321::2:3:4:567:89ab'],
    [`${V6_NIBBLES_FULL}.ip6.arpa.`, '4321:0:1:2:3:4:567:89ab'],
    ['1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa', '2001:db8::1'],
    ['0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.D.F.ip6.arpa', 'fd00::20'],
  ];
  for (const [name, ip] of cases) assert.equal(reverseNameToIp(name), ip, name);
});

test('malformed reverse names are not addresses (as in the kubernetes/dns tests, error cases)', () => {
  const bad = [
    '',
    '255.2.0.192.ip6.arpa.', // 4 segments under ip6.arpa
    '255.2.0.322.in-addr.arpa.', // octet > 255
    `${V6_NIBBLES_FULL}.in-addr.arpa`, // nibbles under in-addr.arpa
    `0.${V6_NIBBLES_FULL}.ip6.arpa.`, // 33 nibbles
    `z${V6_NIBBLES_FULL.slice(1)}.ip6.arpa.`, // not hex
    'custom text',
    '2.0.192.in-addr.arpa', // a network, not an address
    '01.0.0.10.in-addr.arpa', // leading zero
    'in-addr.arpa',
    `ab.${V6_NIBBLES_FULL.slice(2)}.ip6.arpa`, // 2-char label
  ];
  for (const name of bad) assert.equal(reverseNameToIp(name), undefined, name);
});

test('IPs → reverse names round-trip', () => {
  assert.equal(ipToReverseName('10.0.0.1'), '1.0.0.10.in-addr.arpa');
  assert.equal(
    ipToReverseName('2001:db8::1'),
    '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
  );
  for (const ip of ['192.0.2.255', '4321:0:1:2:3:4:567:89ab', 'fd00::20', '::1', '::', '2001:db8::aaaa:0:0:1']) {
    assert.equal(reverseNameToIp(ipToReverseName(ip)), ip, ip);
  }
});

test('IPv6 normalisation matches Go net.IP.String() (as in the kubernetes/dns tests)', () => {
  assert.equal(normalizeIp('2001:db8:0:0:aaaa::1'), '2001:db8::aaaa:0:0:1');
  assert.equal(normalizeIp('2001:db8:0::aaaa:0:0:1'), '2001:db8::aaaa:0:0:1');
  assert.equal(normalizeIp('2001:DB8::8A2E:370:7334'), '2001:db8::8a2e:370:7334');
  assert.equal(normalizeIp('255.255.255.0'), '255.255.255.0');
  assert.equal(normalizeIp('fd00:0:0:0:0:0:0:20'), 'fd00::20');
  assert.equal(normalizeIp('1:0:0:2:0:0:0:3'), '1:0:0:2::3'); // longest zero run wins
  // IPv4-mapped addresses print as IPv4 (Go's To4() != nil), in either spelling
  assert.equal(normalizeIp('::ffff:10.1.0.5'), '10.1.0.5');
  assert.equal(normalizeIp('::FFFF:a01:5'), '10.1.0.5');
  assert.equal(normalizeIp('::fffe:a01:5'), '::fffe:a01:5');
  assert.equal(normalizeIp('1::ffff:a01:5'), '1::ffff:a01:5');
});

test('dashed endpoint labels (CoreDNS style) and their inverse', () => {
  const cases: [string, string][] = [
    ['10.0.0.1', '10-0-0-1'],
    ['fd00::20', 'fd00--20'],
    ['fd00:0:0:0:0:0:0:20', 'fd00--20'],
    ['2001:db8::8a2e:370:7334', '2001-db8--8a2e-370-7334'],
    ['::1', '--1'],
  ];
  for (const [ip, label] of cases) {
    assert.equal(dashedLabel(ip), label, ip);
    assert.equal(parseDashedIp(label), normalizeIp(ip), label);
  }
});

test('pod-name labels parse to IPs; everything else is not an address', () => {
  assert.equal(parseDashedIp('10-1-2-3'), '10.1.2.3');
  assert.equal(parseDashedIp('fd00--1'), 'fd00::1');
  assert.equal(parseDashedIp('FD00--1'), 'fd00::1');
  assert.equal(parseDashedIp('fd00-0-0-0-0-0-0-1'), 'fd00::1');
  for (const bad of ['bogus', '10-1-2', '10-1-2-256', '10-1-2-3-4', '1.2.3.4', 'fd00::1', 'fe80--1%eth0', '', '-', '10-01-2-3']) {
    assert.equal(parseDashedIp(bad), undefined, bad);
  }
});

test('lastDot finds what lastIndexOf(".") finds, from any index', () => {
  fc.assert(
    fc.property(fc.stringMatching(/^[a-z.]{0,20}$/), fc.integer({ min: -3, max: 25 }), (s, from) => {
      assert.equal(lastDot(s, from), s.lastIndexOf('.', from));
    }),
    { numRuns: 2000 },
  );
});

test('fitsInMessage: a name dns-packet writes and reads back as itself, and nothing else', () => {
  const l63 = 'a'.repeat(63);
  const ok = ['a', 'example.org', `${l63}.b`, [l63, l63, l63, 'c'.repeat(61)].join('.'), '2001:db8::1', '_sip._tcp.example.org'];
  const bad = ['', '.', 'a..b', '.a', 'a.', `${l63}a.b`, [l63, l63, l63, 'c'.repeat(62)].join('.'), 'caf\u00e9.example', 'a b.example', 'tab\t.example'];
  for (const n of ok) assert.ok(fitsInMessage(n), n);
  for (const n of bad) assert.ok(!fitsInMessage(n), n);
  // the property it stands for: what fits is written and read back unchanged
  fc.assert(
    fc.property(fc.array(fc.stringMatching(/^[a-z0-9-]{1,70}$/), { minLength: 1, maxLength: 6 }), (labels) => {
      const name = labels.join('.');
      if (!fitsInMessage(name)) return;
      const buf = dnsPacket.encode({ type: 'response', id: 1, answers: [{ type: 'CNAME', name: 'x', data: name }] });
      assert.equal((dnsPacket.decode(buf).answers![0] as { data: string }).data, name);
    }),
  );
});
