// The kube-dns ConfigMap keys, case by case from the original's config tests (as in the kubernetes/dns tests
// #22, g.3 #26 #28), plus our `hosts` key.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type KubeDnsConfig,
  describeErrors,
  parseConfig,
  parseFederations,
  parseHosts,
  parseStubDomains,
  parseUpstreamNameservers,
} from '../src/index.js';

function accepted(data: Record<string, string>): KubeDnsConfig {
  const r = parseConfig(data);
  assert.ok(r.ok, `expected ${JSON.stringify(data)} to be accepted, got ${r.ok ? '' : describeErrors(r.errors)}`);
  return r.config;
}

function rejected(data: Record<string, string>): string {
  const r = parseConfig(data);
  assert.ok(!r.ok, `expected ${JSON.stringify(data)} to be rejected`);
  return describeErrors(r.errors);
}

const servers = (c: KubeDnsConfig, domain: string) =>
  (c.stubDomains.get(domain) ?? []).map((n) => `${n.host}|${n.port}|${n.family}`);

test('valid stub domains from the original tests are accepted with their servers', () => {
  assert.equal(accepted({ stubDomains: '{}' }).stubDomains.size, 0);
  assert.deepEqual(servers(accepted({ stubDomains: '{"foo.com": ["1.2.3.4"]}' }), 'foo.com'), ['1.2.3.4|53|4']);
  assert.deepEqual(servers(accepted({ stubDomains: '{"foo.com": ["1.2.3.4:32564"]}' }), 'foo.com'), ['1.2.3.4|32564|4']);
  assert.deepEqual(servers(accepted({ stubDomains: '{"foo.com": ["ns.foo.com"]}' }), 'foo.com'), ['ns.foo.com|53|0']);
  const two = accepted({ stubDomains: '{"foo.com": ["ns.foo.com"], "bar.com": ["1.2.3.4"]}' });
  assert.deepEqual([...two.stubDomains.keys()].sort(), ['bar.com', 'foo.com']);
  const mixed = accepted({
    stubDomains: JSON.stringify({
      'acme.local': ['2001:db8:1:1:1::1'],
      'google.local': ['google-public-dns-a.google.com'],
      'widget.local': ['[2001:db8:2:2:2::2]:10053', '2001:db8:3:3:3::3'],
    }),
  });
  assert.deepEqual(servers(mixed, 'acme.local'), ['2001:db8:1:1:1::1|53|6']);
  assert.deepEqual(servers(mixed, 'google.local'), ['google-public-dns-a.google.com|53|0']);
  assert.deepEqual(servers(mixed, 'widget.local'), ['2001:db8:2:2:2::2|10053|6', '2001:db8:3:3:3::3|53|6']);
});

test('stub domains: trailing dots and upper case are normalized, server order is kept', () => {
  const c = accepted({ stubDomains: '{"Acme.Local.": ["10.0.0.2", "10.0.0.1:5353", "NS.Acme.Local."]}' });
  assert.deepEqual([...c.stubDomains.keys()], ['acme.local']);
  assert.deepEqual(servers(c, 'acme.local'), ['10.0.0.2|53|4', '10.0.0.1|5353|4', 'ns.acme.local|53|0']);
  assert.deepEqual(c.stubDomains.get('acme.local')?.map((n) => n.raw), ['10.0.0.2', '10.0.0.1:5353', 'NS.Acme.Local.']);
});

test('a stub domain with an empty or null server list is accepted and configures nothing, as in the original', () => {
  assert.equal(accepted({ stubDomains: '{"foo.com": []}' }).stubDomains.size, 0);
  assert.equal(accepted({ stubDomains: '{"foo.com": null, "bar.com": ["1.1.1.1"]}' }).stubDomains.size, 1);
});

test('invalid stub domains from the original tests are rejected, naming the key and the value', () => {
  assert.match(rejected({ stubDomains: '{"": ["1.2.3.4"]}' }), /^stubDomains: domain "" is not a valid DNS-1123 subdomain$/);
  assert.match(rejected({ stubDomains: '{"$$$$": ["1.2.3.4"]}' }), /^stubDomains: domain "\$\$\$\$"/);
  assert.match(rejected({ stubDomains: '{"foo": ["$$$$"]}' }), /^stubDomains: domain "foo": "\$\$\$\$" is neither an IP address nor a valid host name$/);
  assert.match(rejected({ stubDomains: '{"foo.com": ["1.2.3.4:65564"]}' }), /^stubDomains: domain "foo.com": port 65564 is out of range 1-65535 in "1.2.3.4:65564"$/);
  assert.match(rejected({ stubDomains: '{"foo.com": ["ns.foo.com:abc"]}' }), /port "abc" is not a number in "ns.foo.com:abc"/);
});

test('a stub server that is a mistyped IPv4 address is refused, not resolved to another address by the system resolver', () => {
  // getaddrinfo reads these as inet_aton does: 10.0.53 is 10.0.0.53, 010.001.002.003 is 8.1.2.3
  for (const bad of ['10.0.53', '010.001.002.003', '192.168.0x10.1', '0x0a000035', '10.0.53:5353']) {
    assert.match(rejected({ stubDomains: JSON.stringify({ 'corp.example': [bad] }) }), /is not a valid IP address/, bad);
  }
  // names with digits in them are still names
  for (const good of ['ns1.corp.example', '1.ns.example', 'dns-10.internal']) assert.equal(accepted({ stubDomains: JSON.stringify({ 'corp.example': [good] }) }).stubDomains.size, 1, good);
});

test('two spellings of one stub domain are rejected: neither list of servers may silently replace the other', () => {
  assert.match(rejected({ stubDomains: '{"Acme.local": ["1.1.1.1"], "acme.local": ["2.2.2.2"]}' }), /^stubDomains: domains "Acme\.local" and "acme\.local" are the same domain: list its servers under one key$/);
  assert.match(rejected({ stubDomains: '{"acme.local": ["1.1.1.1"], "acme.local.": ["2.2.2.2"]}' }), /domains "acme\.local" and "acme\.local\." are the same domain/);
});

test('an IPv6 zone index (fe80::1%eth0) is rejected wherever an address is written: dnsmasq refuses it', () => {
  // accepted, it replaced working servers with lines dnsmasq rejects ("bad interface name")
  assert.match(rejected({ stubDomains: '{"a.local": ["fe80::1%bogus0"]}' }), /^stubDomains: domain "a\.local": "fe80::1%bogus0": an IPv6 zone index \(%\.\.\.\) is not accepted$/);
  assert.match(rejected({ stubDomains: '{"a.local": ["[fe80::1%eth0]:53"]}' }), /zone index/);
  assert.match(rejected({ upstreamNameservers: '["fe80::2%nosuchif"]' }), /^upstreamNameservers: .*"fe80::2%nosuchif": an IPv6 zone index/);
  assert.match(rejected({ hosts: '192.0.2.1 ok.example\nfe80::3%eth0 foo' }), /^hosts: line 2: "fe80::3%eth0" is not an IP address \(an IPv6 zone index \(%\.\.\.\) is not accepted\)$/);
  assert.deepEqual(servers(accepted({ stubDomains: '{"a.local": ["fe80::1"]}' }), 'a.local'), ['fe80::1|53|6'], 'without the index it is an address');
});

test('stub domains of the wrong JSON shape are rejected with a readable reason', () => {
  assert.match(rejected({ stubDomains: '["1.2.3.4"]' }), /^stubDomains: must be a JSON object of domain → list of servers$/);
  assert.match(rejected({ stubDomains: '{"foo.com": "1.2.3.4"}' }), /^stubDomains: domain "foo.com": servers must be a list of strings$/);
  assert.match(rejected({ stubDomains: '{"foo.com": [53]}' }), /servers must be a list of strings/);
  assert.match(rejected({ stubDomains: '{"foo.com": ["1.2.3.4"' }), /^stubDomains: invalid JSON: /);
});

test('every error of a key is reported, not only the first', () => {
  const r = parseStubDomains('{"$$": ["1.1.1.1"], "ok.com": ["1.1.1.1:0", "bad host"]}');
  assert.ok(!r.ok);
  assert.equal(r.errors.length, 3);
});

test('valid upstream nameservers from the original tests are accepted, port 53 by default', () => {
  const ups = (text: string) => accepted({ upstreamNameservers: text }).upstreamNameservers.map((n) => `${n.host}|${n.port}`);
  assert.deepEqual(ups('[]'), []);
  assert.deepEqual(ups('["1.2.3.4"]'), ['1.2.3.4|53']);
  assert.deepEqual(ups('["1.2.3.4", "8.8.4.4", "8.8.8.8"]'), ['1.2.3.4|53', '8.8.4.4|53', '8.8.8.8|53']);
  assert.deepEqual(ups('["1.2.3.4:53"]'), ['1.2.3.4|53']);
  assert.deepEqual(ups('["[2001:db8:2:2:2::2]:10053", "2001:db8:3:3:3::3"]'), ['2001:db8:2:2:2::2|10053', '2001:db8:3:3:3::3|53']);
  assert.deepEqual(ups('  \n'), [], 'an empty file means no upstreams');
  assert.deepEqual(ups('null'), [], 'JSON null means no upstreams, like Go');
});

test('invalid upstream nameservers from the original tests are rejected, naming each bad value', () => {
  assert.match(
    rejected({ upstreamNameservers: '["1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"]' }),
    /^upstreamNameservers: 4 servers given, at most 3 are allowed$/,
  );
  const msg = rejected({ upstreamNameservers: '["1.1.1.1:abc", "1.1.1.1:", "1.1.1.1:123456789"]' });
  assert.match(msg, /port "abc" is not a number in "1\.1\.1\.1:abc"/);
  assert.match(msg, /port "" is not a number in "1\.1\.1\.1:"/);
  assert.match(msg, /port 123456789 is out of range 1-65535 in "1\.1\.1\.1:123456789"/);
  assert.match(rejected({ upstreamNameservers: '["invalidip"]' }), /"invalidip" is not an IP address or IP:port/);
  assert.match(rejected({ upstreamNameservers: '["invalidip:80"]' }), /"invalidip" in "invalidip:80" is not an IP address/);
  assert.match(rejected({ upstreamNameservers: '["ns.example.com"]' }), /not an IP address/, 'upstreams must be IPs, unlike stub servers');
  assert.match(rejected({ upstreamNameservers: '"1.1.1.1"' }), /^upstreamNameservers: must be a JSON list/);
  assert.match(rejected({ upstreamNameservers: '[1111]' }), /^upstreamNameservers: 1111 is not a string: must be a JSON list/);
});

test('federations (the flag format, not JSON) parse as the original ParseFederationsFlag', () => {
  const ok = (text: string) => {
    const r = parseFederations(text);
    assert.ok(r.ok, `${JSON.stringify(text)} should parse`);
    return Object.fromEntries(r.value);
  };
  assert.deepEqual(ok(''), {});
  assert.deepEqual(ok('a=b'), { a: 'b' });
  assert.deepEqual(ok('a=b,cc=dd'), { a: 'b', cc: 'dd' });
  assert.deepEqual(ok('abc=d.e.f'), { abc: 'd.e.f' });
  assert.deepEqual(ok(' a = b , cc=dd \n'), { a: 'b', cc: 'dd' }, 'whitespace around items is trimmed');
  for (const bad of ['ccdd', 'a=b,ccdd', '-', 'a.b.c=d.e.f', 'ab.cd=x', '=abcd', 'abcd=', 'abcd=.', 'x=$$']) {
    assert.equal(parseFederations(bad).ok, false, `${JSON.stringify(bad)} should be rejected`);
  }
});

test('federations in the ConfigMap: valid ones are kept, an invalid name rejects the update', () => {
  assert.equal(accepted({ federations: '' }).federations.size, 0);
  assert.deepEqual(Object.fromEntries(accepted({ federations: 'abc=d.e.f' }).federations), { abc: 'd.e.f' });
  assert.match(rejected({ federations: 'a.b=cdef' }), /^federations: federation name "a\.b" is not a valid DNS-1123 label$/);
  assert.match(rejected({ federations: 'abc=$$' }), /^federations: federation domain "\$\$" is not a valid DNS-1123 subdomain$/);
  assert.match(rejected({ federations: 'ccdd' }), /^federations: "ccdd" is not name=domain$/);
});

test('hosts: comments, blank lines, IPv6 and several names per line', () => {
  const c = accepted({
    hosts: ['# machines outside the cluster', '', '192.0.2.10   db.corp.example db', '  2001:db8::10\tdb6.corp.example # v6', '\r', '10.1.1.1 Printer.Corp.Example.'].join('\n'),
  });
  assert.deepEqual(c.hosts, [
    { ip: '192.0.2.10', names: ['db.corp.example', 'db'], line: 3 },
    { ip: '2001:db8::10', names: ['db6.corp.example'], line: 4 },
    { ip: '10.1.1.1', names: ['Printer.Corp.Example.'], line: 6 },
  ]);
  assert.deepEqual(accepted({ hosts: '\r\n192.0.2.1 a.example\r\n' }).hosts, [{ ip: '192.0.2.1', names: ['a.example'], line: 2 }]);
});

test('hosts: a bad IP, a missing name or a bad name is rejected with its line number', () => {
  assert.match(rejected({ hosts: '192.0.2.1 ok.example\n\n999.1.1.1 bad.example' }), /^hosts: line 3: "999\.1\.1\.1" is not an IP address$/);
  assert.match(rejected({ hosts: 'db.example 192.0.2.1' }), /^hosts: line 1: "db\.example" is not an IP address$/);
  assert.match(rejected({ hosts: '# c\n192.0.2.1   # no name' }), /^hosts: line 2: no host name after 192\.0\.2\.1$/);
  assert.match(rejected({ hosts: '192.0.2.1 good.example bad_name.example -x' }), /^hosts: line 1: "bad_name\.example", "-x" not a valid host name$/);
  const r = parseHosts('1.1.1.1 a\nnope\n2.2.2.2 b\n3.3.3.3 $');
  assert.ok(!r.ok);
  assert.deepEqual(r.errors.map((e) => e.split(':')[0]), ['line 2', 'line 4']);
});

test('an invalid key rejects the whole update, however valid the other keys are', () => {
  const r = parseConfig({
    stubDomains: '{"acme.local": ["1.2.3.4"]}',
    upstreamNameservers: '["8.8.8.8", "bad"]',
    federations: 'abc=d.e.f',
    hosts: '192.0.2.1 a.example',
  });
  assert.ok(!r.ok);
  assert.deepEqual(r.errors.map((e) => e.key), ['upstreamNameservers']);
  const both = parseConfig({ stubDomains: '{"$": ["1.1.1.1"]}', hosts: 'x y' });
  assert.ok(!both.ok);
  assert.deepEqual(both.errors.map((e) => e.key), ['stubDomains', 'hosts']);
  // transferTo: "" turns transfers off; separators alone name nobody and are refused
  const off = parseConfig({ transferTo: '' });
  assert.ok(off.ok);
  assert.deepEqual(off.config.zoneOverrides, { transferTo: '' });
  const commas = parseConfig({ transferTo: ' , ' });
  assert.ok(!commas.ok);
  assert.match(commas.errors[0]!.reason, /names no CIDR or IP\[:port\]/);
});

test('a full valid ConfigMap fills every setting; missing keys and unknown keys leave defaults', () => {
  const c = accepted({
    stubDomains: '{"acme.local": ["1.2.3.4"]}\n',
    upstreamNameservers: '["8.8.8.8", "8.8.4.4"]\n',
    federations: 'myfederation=example.com',
    hosts: '192.0.2.1 a.example',
    somethingElse: 'ignored',
  });
  assert.deepEqual(servers(c, 'acme.local'), ['1.2.3.4|53|4']);
  assert.deepEqual(c.upstreamNameservers.map((n) => n.host), ['8.8.8.8', '8.8.4.4']);
  assert.equal(c.federations.get('myfederation'), 'example.com');
  assert.equal(c.hosts.length, 1);

  const empty = accepted({});
  assert.deepEqual([empty.stubDomains.size, empty.upstreamNameservers.length, empty.federations.size, empty.hosts.length], [0, 0, 0, 0]);
  assert.equal(empty.version, '');
  const r = parseConfig({}, 'abc123');
  assert.ok(r.ok && r.config.version === 'abc123');
});

test('parseUpstreamNameservers keeps the operator text for messages', () => {
  const r = parseUpstreamNameservers('[" 10.0.0.1:5353 "]');
  assert.ok(r.ok);
  assert.deepEqual(r.value[0], { host: '10.0.0.1', port: 5353, family: 4, raw: ' 10.0.0.1:5353 ' });
});

test('thousands of errors are told as the first 20 and a count (a 40,000-line hosts value made one 5.6 MB log line)', () => {
  const text = rejected({ hosts: Array.from({ length: 5000 }, (_, i) => `not-an-ip host${i}.example`).join('\n') });
  assert.match(text, /^hosts: line 1: "not-an-ip" is not an IP address; /);
  assert.match(text, /hosts: line 20: [^;]*; and 4980 more$/);
  assert.ok(text.length < 2000, `${text.length} characters`);
});

test('a ConfigMap value saved with a byte-order mark (Windows editors) is read like the same JSON without it', () => {
  // hosts, federations and the zone options already ignored it; the JSON keys were rejected as
  // "Unexpected token ''", pointing at a character nobody can see
  const c = accepted({ stubDomains: '\uFEFF{"acme.local": ["1.2.3.4"]}\n', upstreamNameservers: '\uFEFF["8.8.8.8"]' });
  assert.deepEqual(servers(c, 'acme.local'), ['1.2.3.4|53|4']);
  assert.deepEqual(c.upstreamNameservers.map((n) => n.host), ['8.8.8.8']);
});

test('invalid JSON is told on one line with its line and column, never with the raw text breaking the line', () => {
  const msg = rejected({ upstreamNameservers: '[\n  "8.8.8.8",\n  "8.8.4.4",\n]\n' });
  assert.doesNotMatch(msg, /[\n\r\t\uFEFF]/, JSON.stringify(msg));
  assert.match(msg, /^upstreamNameservers: invalid JSON: /);
  assert.match(rejected({ stubDomains: '{\n  "a.local": ["1.2.3.4"]\n  "b.local": ["5.6.7.8"]\n}' }), /^stubDomains: invalid JSON: .* \(line 3, column 3\)$/);
  assert.doesNotMatch(rejected({ stubDomains: '{"a.local":\t["1.2.3.4" \u0001]}' }), /[\t\u0001]/);
});

test('a server that is not a string is named in the reason', () => {
  assert.match(rejected({ stubDomains: '{"foo.com": ["1.2.3.4", 53]}' }), /^stubDomains: domain "foo.com": 53 is not a string: servers must be a list of strings$/);
  assert.match(rejected({ stubDomains: '{"foo.com": ["1.2.3.4", null]}' }), /^stubDomains: domain "foo.com": null is not a string/);
  assert.match(rejected({ upstreamNameservers: '["8.8.8.8", 1111]' }), /^upstreamNameservers: 1111 is not a string: must be a JSON list of "IP" or "IP:port" strings$/);
  assert.match(rejected({ upstreamNameservers: '{"a": "8.8.8.8"}' }), /^upstreamNameservers: must be a JSON list of "IP" or "IP:port" strings$/);
});
