// Server addresses as operators write them (as in the kubernetes/dns tests), Go's net.SplitHostPort, and
// the nameservers of /etc/resolv.conf.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatHostPort, parseHostPort, parseIpNameserver, parsePort, parseResolvConf, splitHostPort } from '../src/index.js';

test('ValidateNameserverIpAndPort cases: IP, IP:port, [IPv6]:port accepted with port 53 by default', () => {
  const ok = (raw: string) => {
    const r = parseIpNameserver(raw);
    assert.ok(r.ok, `${JSON.stringify(raw)}: ${r.ok ? '' : r.error}`);
    return [r.value.host, r.value.port, r.value.family];
  };
  assert.deepEqual(ok('1.2.3.4'), ['1.2.3.4', 53, 4]);
  assert.deepEqual(ok('1.2.3.4:53'), ['1.2.3.4', 53, 4]);
  assert.deepEqual(ok('1.2.3.4:10053'), ['1.2.3.4', 10053, 4]);
  assert.deepEqual(ok('2001:db8::1'), ['2001:db8::1', 53, 6]);
  assert.deepEqual(ok('[2001:db8::1]:5353'), ['2001:db8::1', 5353, 6]);
  assert.deepEqual(ok('[2001:db8::1]'), ['2001:db8::1', 53, 6]);
  assert.deepEqual(ok(' 8.8.8.8 '), ['8.8.8.8', 53, 4]);
  const custom = parseIpNameserver('1.2.3.4', 5353);
  assert.ok(custom.ok && custom.value.port === 5353, 'the default port is the caller’s');
});

test('ValidateNameserverIpAndPort cases: bad forms rejected with the offending text', () => {
  const err = (raw: string) => {
    const r = parseIpNameserver(raw);
    assert.ok(!r.ok, `${JSON.stringify(raw)} should be rejected`);
    return r.error;
  };
  assert.equal(err(''), 'empty nameserver');
  assert.equal(err('1.1.1.1:abc'), 'port "abc" is not a number in "1.1.1.1:abc"');
  assert.equal(err('1.1.1.1:123456789'), 'port 123456789 is out of range 1-65535 in "1.1.1.1:123456789"');
  assert.equal(err('1.1.1.1:'), 'port "" is not a number in "1.1.1.1:"');
  assert.equal(err('1.1.1.1:0'), 'port 0 is out of range 1-65535 in "1.1.1.1:0"');
  assert.equal(err('invalidip'), '"invalidip" is not an IP address or IP:port');
  assert.equal(err('invalidip:80'), '"invalidip" in "invalidip:80" is not an IP address');
  assert.equal(err('1.2.3:53'), '"1.2.3" in "1.2.3:53" is not an IP address');
  assert.match(err('[2001:db8::1]:53:54'), /not an IP address or IP:port/);
  assert.match(err('1.2.3.4:-1'), /port "-1" is not a number/);
});

test('splitHostPort follows Go net.SplitHostPort', () => {
  assert.deepEqual(splitHostPort('1.2.3.4:53'), { host: '1.2.3.4', port: '53' });
  assert.deepEqual(splitHostPort('[::1]:53'), { host: '::1', port: '53' });
  assert.deepEqual(splitHostPort('name.example:dns'), { host: 'name.example', port: 'dns' });
  assert.deepEqual(splitHostPort(':53'), { host: '', port: '53' });
  assert.deepEqual(splitHostPort('1.2.3.4:'), { host: '1.2.3.4', port: '' });
  assert.deepEqual(splitHostPort('[fe80::1%eth0]:53'), { host: 'fe80::1%eth0', port: '53' });
  // Each of these is an error in Go.
  for (const bad of ['1.2.3.4', '', '::1', '2001:db8::1:53', '[::1]', '[::1', '[::1]53', '[::1]x:53', '[::1]:53:54', 'a]b:53', 'a[b:53', '[a[b]:53', '[::1]:5]3']) {
    assert.equal(splitHostPort(bad), undefined, JSON.stringify(bad));
  }
});

test('parsePort takes decimal 1..65535 only', () => {
  assert.deepEqual(parsePort('1'), { ok: true, value: 1 });
  assert.deepEqual(parsePort('65535'), { ok: true, value: 65535 });
  for (const bad of ['0', '65536', '', ' 53', '0x35', '5e1', '+53']) assert.equal(parsePort(bad).ok, false, JSON.stringify(bad));
});

test('parseHostPort: listener and probe addresses, default port when none', () => {
  assert.deepEqual(parseHostPort('127.0.0.1:10053', 53), { ok: true, value: { host: '127.0.0.1', port: 10053 } });
  assert.deepEqual(parseHostPort('127.0.0.1', 53), { ok: true, value: { host: '127.0.0.1', port: 53 } });
  assert.deepEqual(parseHostPort('::1', 53), { ok: true, value: { host: '::1', port: 53 } });
  assert.deepEqual(parseHostPort('[::1]', 53), { ok: true, value: { host: '::1', port: 53 } });
  assert.deepEqual(parseHostPort('[::1]:5353', 53), { ok: true, value: { host: '::1', port: 5353 } });
  assert.deepEqual(parseHostPort('localhost', 8081), { ok: true, value: { host: 'localhost', port: 8081 } });
  assert.deepEqual(parseHostPort('kube-dns.kube-system:53', 1), { ok: true, value: { host: 'kube-dns.kube-system', port: 53 } });
  for (const bad of ['', ':53', '1.2.3.4:x', '1.2.3.4:70000']) {
    const r = parseHostPort(bad, 53);
    assert.ok(!r.ok, JSON.stringify(bad));
    assert.ok(r.error.includes(JSON.stringify(bad)), `the error names the input: ${r.error}`);
  }
});

test('formatHostPort brackets IPv6 only', () => {
  assert.equal(formatHostPort('10.0.0.10', 53), '10.0.0.10:53');
  assert.equal(formatHostPort('fd00::a', 53), '[fd00::a]:53');
  assert.equal(formatHostPort('dns.example', 5353), 'dns.example:5353');
  // What we print must parse back to the same server.
  for (const [h, p] of [['10.0.0.10', 53], ['fd00::a', 10053]] as const) {
    const r = parseIpNameserver(formatHostPort(h, p));
    assert.ok(r.ok && r.value.host === h && r.value.port === p);
  }
});

test('resolv.conf: nameserver lines in order; comments, other options and non-IPs skipped', () => {
  const text = [
    '# generated by kubelet',
    'search default.svc.cluster.local svc.cluster.local cluster.local',
    'nameserver 10.96.0.10',
    '; nameserver 9.9.9.9',
    '#nameserver 8.8.8.8',
    '  nameserver\t2001:db8::53   # trailing comment',
    'nameserver fe80::1%eth0',
    'nameserver dns.example',
    'nameserver',
    'options ndots:5',
    'nameserver 192.0.2.53\r',
  ].join('\n');
  assert.deepEqual(
    parseResolvConf(text).map((n) => [n.host, n.port, n.family]),
    [
      ['10.96.0.10', 53, 4],
      ['2001:db8::53', 53, 6],
      ['fe80::1', 53, 6],
      ['192.0.2.53', 53, 4],
    ],
  );
  assert.deepEqual(parseResolvConf(''), []);
});
