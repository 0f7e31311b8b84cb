// autopath's pure parts: the client-subnet option read from query bytes, the pod IP index, the
// search path a pod walks, and the memory of searches left to the pod.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as dnsPacket from 'dns-packet';
import { isLoopback, parseOption, readClientSubnet } from '../src/autopath/ecs.js';
import { PodIpIndex } from '../src/autopath/pod-index.js';
import { basesReaching, firstExpansion, laterNameLooksFirst, parseSearchDomains, remainingCandidates } from '../src/autopath/search.js';
import { MAX_CHARS, MAX_ENTRIES, MAX_PER_CLIENT, SearchMemory, TTL_MS } from '../src/autopath/search-memory.js';
import { parseQuery } from '../src/server/wire.js';

function queryWith(options: object[] | undefined): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: 1,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name: 'x.default.svc.cluster.local', type: 'A', class: 'IN' }],
    ...(options && { additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0, options } as dnsPacket.Answer] }),
  });
}

function ecsOf(buf: Buffer) {
  const q = parseQuery(buf);
  assert.ok(q.ok);
  return readClientSubnet(buf, q.questionEnd);
}

test('client subnet: the address dnsmasq --add-subnet=32,128 adds, for IPv4 and IPv6', () => {
  assert.deepEqual(ecsOf(queryWith([{ code: 'CLIENT_SUBNET', family: 1, sourcePrefixLength: 32, scopePrefixLength: 0, ip: '10.244.1.7' }])), {
    kind: 'subnet',
    family: 4,
    prefix: 32,
    address: '10.244.1.7',
  });
  assert.deepEqual(ecsOf(queryWith([{ code: 'CLIENT_SUBNET', family: 2, sourcePrefixLength: 128, scopePrefixLength: 0, ip: 'fd00:0:0::a:7' }])), {
    kind: 'subnet',
    family: 6,
    prefix: 128,
    address: 'fd00::a:7',
  });
  // a shorter prefix is read as sent (the caller refuses it: it is not one pod)
  assert.deepEqual(ecsOf(queryWith([{ code: 'CLIENT_SUBNET', family: 1, sourcePrefixLength: 24, scopePrefixLength: 0, ip: '10.244.1.0' }])), {
    kind: 'subnet',
    family: 4,
    prefix: 24,
    address: '10.244.1.0',
  });
  assert.deepEqual(ecsOf(queryWith(undefined)), { kind: 'none' });
  assert.deepEqual(ecsOf(queryWith([{ code: 'COOKIE', data: Buffer.alloc(8, 1) }])), { kind: 'none' });
});

test('client subnet: malformed options are reported, never thrown', () => {
  const bad = (data: number[]) => parseOption(Buffer.from(data));
  assert.equal(bad([0, 1, 32]).kind, 'malformed'); // shorter than 4
  assert.equal(bad([0, 3, 32, 0, 10, 0, 0, 1]).kind, 'malformed'); // family 3
  assert.equal(bad([0, 1, 33, 0, 10, 0, 0, 1, 0]).kind, 'malformed'); // /33 for IPv4
  assert.equal(bad([0, 1, 32, 0, 10, 0, 0]).kind, 'malformed'); // 3 octets for /32
  assert.equal(bad([0, 1, 32, 24, 10, 0, 0, 1]).kind, 'malformed'); // scope set in a query
  assert.equal(bad([0, 1, 20, 0, 10, 0, 0x1f]).kind, 'malformed'); // bits past /20
  assert.deepEqual(bad([0, 1, 0, 0]), { kind: 'subnet', family: 4, prefix: 0, address: '0.0.0.0' });
  // two options make the asker ambiguous
  const two = queryWith([
    { code: 'CLIENT_SUBNET', family: 1, sourcePrefixLength: 32, scopePrefixLength: 0, ip: '10.0.0.1' },
    { code: 'CLIENT_SUBNET', family: 1, sourcePrefixLength: 32, scopePrefixLength: 0, ip: '10.0.0.2' },
  ]);
  assert.equal(ecsOf(two).kind, 'malformed');
  // every truncation of a valid query: an answer, never an exception
  const ok = queryWith([{ code: 'CLIENT_SUBNET', family: 1, sourcePrefixLength: 32, scopePrefixLength: 0, ip: '10.244.1.7' }]);
  const q = parseQuery(ok);
  assert.ok(q.ok);
  for (let n = q.questionEnd; n < ok.length; n++) assert.equal(readClientSubnet(ok.subarray(0, n), q.questionEnd).kind, 'malformed');
});

test('client subnet is trusted from loopback only', () => {
  for (const a of ['127.0.0.1', '127.0.0.2', '::1', '::ffff:127.0.0.1']) assert.ok(isLoopback(a), a);
  for (const a of ['10.0.0.1', '::ffff:10.0.0.1', 'fd00::1', '128.0.0.1', undefined, '']) assert.ok(!isLoopback(a), String(a));
});

test('pod index: one namespace per IP, or a reason for the plain answer', () => {
  const ix = new PodIpIndex();
  ix.setPod({ namespace: 'shop', name: 'web-0', ips: ['10.244.0.5', 'fd00::5'] });
  assert.deepEqual(ix.lookup('10.244.0.5'), { ok: true, namespace: 'shop' });
  assert.deepEqual(ix.lookup('fd00::5'), { ok: true, namespace: 'shop' });
  assert.deepEqual(ix.lookup('10.244.0.6'), { ok: false, reason: 'unknown_pod' });
  // hostNetwork pods share the node's IP with pods of every namespace
  ix.setPod({ namespace: 'kube-system', name: 'proxy', ips: ['192.168.1.10'], hostNetwork: true });
  ix.setPod({ namespace: 'shop', name: 'agent', ips: ['192.168.1.10'], hostNetwork: true });
  assert.deepEqual(ix.lookup('192.168.1.10'), { ok: false, reason: 'host_network' });
  // an IP reused by a pod of another namespace before the old pod is gone
  ix.setPod({ namespace: 'bank', name: 'api-0', ips: ['10.244.0.5'] });
  assert.deepEqual(ix.lookup('10.244.0.5'), { ok: false, reason: 'ambiguous_pod' });
  ix.deletePod('shop', 'web-0');
  assert.deepEqual(ix.lookup('10.244.0.5'), { ok: true, namespace: 'bank' });
  // a finished pod keeps its IP in status, but no longer owns it
  ix.setPod({ namespace: 'shop', name: 'job', ips: ['10.244.0.5'], finished: true });
  assert.deepEqual(ix.lookup('10.244.0.5'), { ok: true, namespace: 'bank' });
  // a pod that moves IP leaves the old one
  ix.setPod({ namespace: 'bank', name: 'api-0', ips: ['10.244.0.9'] });
  assert.deepEqual(ix.lookup('10.244.0.5'), { ok: false, reason: 'unknown_pod' });
  assert.deepEqual(ix.lookup('10.244.0.9'), { ok: true, namespace: 'bank' });
  ix.deletePod('bank', 'api-0');
  ix.deletePod('kube-system', 'proxy');
  ix.deletePod('shop', 'agent');
  assert.equal(ix.size, 0);
  assert.deepEqual(ix.lookup('192.168.1.10'), { ok: false, reason: 'unknown_pod' });
});

test('search path: the first expansion and what follows it', () => {
  assert.deepEqual(firstExpansion('www.example.com.shop.svc.cluster.local', 'cluster.local'), { base: 'www.example.com', namespace: 'shop' });
  assert.deepEqual(firstExpansion('api.bank.shop.svc.cluster.local', 'cluster.local'), { base: 'api.bank', namespace: 'shop' });
  assert.equal(firstExpansion('shop.svc.cluster.local', 'cluster.local'), undefined);
  assert.equal(firstExpansion('x.shop.pod.cluster.local', 'cluster.local'), undefined);
  assert.equal(firstExpansion('www.example.com', 'cluster.local'), undefined);
  assert.deepEqual(remainingCandidates('www.example.com', 'cluster.local', ['corp.example', 'cluster.local']), [
    'www.example.com.svc.cluster.local',
    'www.example.com.cluster.local',
    'www.example.com.corp.example',
    'www.example.com',
  ]);
  assert.deepEqual(parseSearchDomains('nameserver 10.0.0.1\nsearch a.example B.example.\noptions ndots:1\n'), ['a.example', 'b.example']);
  assert.deepEqual(parseSearchDomains('search old.example\ndomain new.example\n'), ['new.example']);
  assert.deepEqual(parseSearchDomains('nameserver 10.0.0.1\n'), []);
});

test('search path: which searches a later name belongs to, and which searches have lookalike later names', () => {
  const z = 'cluster.local';
  const node = ['corp.example'];
  // redis.N.svc.<zone> is the second name of `redis.N`'s search, the third of `redis.N.svc`'s,
  // and the last of its own; never a later name of `redis`'s (it is that search's first)
  assert.deepEqual(basesReaching('redis.payments.svc.cluster.local', z, node), ['redis.payments.svc.cluster.local', 'redis.payments', 'redis.payments.svc']);
  assert.deepEqual(basesReaching('db.corp.example', z, node), ['db.corp.example', 'db']);
  for (const name of ['redis.payments.svc.cluster.local', 'db.corp.example']) {
    for (const b of basesReaching(name, z, node)) assert.ok(remainingCandidates(b, z, node).includes(name), `${name} is a later name of ${b}`);
  }
  assert.deepEqual(basesReaching('xcorp.example', z, node), ['xcorp.example'], 'a label boundary, not a suffix of characters');
  // `redis.payments` and `redis.payments.svc.cluster.local` from a pod of payments: a later name
  // looks like the first expansion of `redis`; `redis` and `redis.bank` do not
  assert.ok(laterNameLooksFirst('redis.payments', 'payments', z, node));
  assert.ok(laterNameLooksFirst('redis.payments.svc.cluster.local', 'payments', z, node));
  assert.ok(!laterNameLooksFirst('redis', 'payments', z, node));
  assert.ok(!laterNameLooksFirst('redis.bank', 'payments', z, node));
  assert.ok(!laterNameLooksFirst('www.example.com', 'payments', z, node));
});

test('search memory: per client and base, forgotten after TTL_MS, bounded in entries and characters', () => {
  const m = new SearchMemory();
  m.remember('10.0.0.1', 'redis.payments', 1000);
  assert.ok(m.has('10.0.0.1', 'redis.payments', 1000 + TTL_MS - 1));
  assert.ok(!m.has('10.0.0.1', 'redis.payments', 1000 + TTL_MS), 'expired');
  assert.ok(!m.has('10.0.0.2', 'redis.payments', 1000), 'another client');
  assert.ok(!m.has('10.0.0.1', 'redis', 1000), 'another base');
  // expired entries go as new ones come
  m.remember('10.0.0.1', 'b', 1000 + TTL_MS);
  assert.equal(m.size, 1);

  // entries: the oldest goes first; a refreshed one moves to the back
  const small = new SearchMemory({ ttlMs: TTL_MS, maxEntries: 3, maxChars: MAX_CHARS, maxPerClient: MAX_PER_CLIENT });
  for (const b of ['a', 'b', 'c']) small.remember('ip', b, 0);
  small.remember('ip', 'a', 1);
  small.remember('ip', 'd', 2);
  assert.deepEqual(['a', 'b', 'c', 'd'].map((b) => small.has('ip', b, 3)), [true, false, true, true]);
  assert.equal(small.size, 3);

  // the default bounds, filled with the longest keys (a 39-character IPv6 address, 253-character
  // names) and then with short ones: never more than MAX_ENTRIES entries nor MAX_CHARS characters
  const full = new SearchMemory();
  const ip6 = 'fd00:1111:2222:3333:4444:5555:6666:7777';
  const long = (i: number) => `${String(i).padStart(6, '0')}.${'x'.repeat(63)}.${'y'.repeat(63)}.${'z'.repeat(63)}.${'w'.repeat(54)}`;
  assert.equal(long(0).length, 253);
  for (let i = 0; i < 20_000; i++) {
    full.remember(ip6, long(i), 0);
    assert.ok(full.keyChars <= MAX_CHARS && full.size <= MAX_ENTRIES);
  }
  assert.ok(full.has(ip6, long(19_999), 0) && !full.has(ip6, long(0), 0));
  for (let i = 0; i < 20; i++) for (let j = 0; j < 1000; j++) full.remember(`10.0.0.${i}`, `n${j}`, 0);
  assert.equal(full.size, MAX_ENTRIES);
  assert.ok(full.keyChars <= MAX_CHARS);
  assert.ok(full.clients <= 20);
});

test('search memory: one client failing many lookups drops its own oldest searches, not the other pods\' ', () => {
  const m = new SearchMemory();
  m.remember('10.0.0.1', 'redis.payments', 0);
  m.remember('10.0.0.2', 'db.orders', 0);
  for (let i = 0; i < 50_000; i++) m.remember('10.9.9.9', `x${i}.flood`, 1 + i / 10_000);
  assert.ok(m.has('10.0.0.1', 'redis.payments', 5) && m.has('10.0.0.2', 'db.orders', 5), 'the other pods\' searches are still there');
  assert.ok(m.has('10.9.9.9', 'x49999.flood', 5) && !m.has('10.9.9.9', 'x0.flood', 5), 'the busy one keeps its newest');
  assert.equal(m.size, MAX_PER_CLIENT + 2);
  // expiry and refreshes keep the count right: once everything expires, nothing is left
  m.remember('10.0.0.1', 'late', 1_000_000);
  assert.equal(m.size, 1);
  assert.equal(m.clients, 1);
});

test('search memory: a resolver asks A and AAAA, so each failed walk is remembered twice: the per-client bound still holds', () => {
  const m = new SearchMemory();
  m.remember('10.0.0.1', 'redis.payments', 0);
  m.remember('10.0.0.1', 'redis.payments', 0);
  assert.equal(m.clients, 1, 'the refreshed key still belongs to its client');
  for (let i = 0; i < 50_000; i++) {
    const t = 1 + i / 10_000;
    m.remember('10.9.9.9', `x${i}.flood`, t);
    m.remember('10.9.9.9', `x${i}.flood`, t);
  }
  assert.ok(m.has('10.0.0.1', 'redis.payments', 5), 'the other pod\'s search is still there');
  assert.equal(m.size, MAX_PER_CLIENT + 1);
  // an entry that expires after being refreshed goes without an error, at the next remember
  assert.doesNotThrow(() => m.remember('10.0.0.2', 'db.orders', 1_000_000));
  assert.equal(m.size, 1);
  assert.equal(m.clients, 1);
});
