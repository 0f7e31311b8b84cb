// --autopath straight at kube-dns: the client-subnet option is believed only from loopback and
// only when well formed and one address long; everything else gets the plain NXDOMAIN and is
// counted. Also: the node's search domains, and --autopath off by default.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as dnsPacket from 'dns-packet';
import { clusterIPService, externalNameService, pod, startTestDnsServer } from '@kube-dns/testkit';
import { AUTOPATH_RESULTS } from '../src/autopath/metrics.js';
import { askFrom, autopathCounts, question, records, subnetOf } from './autopath-helpers.js';
import { eventually, startCluster, waitSynced } from './integration-helpers.js';

const POD_IP = '10.244.3.7';
const EXT = 'example.test.shop.svc.cluster.local';

/** kubedns_autopath_total of every result, before anything was asked. */
const zeroCounts = Object.fromEntries(AUTOPATH_RESULTS.map((r) => [r, 0]));

async function setup(t: import('node:test').TestContext, args: string[]) {
  const upstream = await startTestDnsServer({
    handler: (q) => {
      // big.example.test: more addresses than fit over UDP, where the answer is TC with none
      if (q.name === 'big.example.test' && q.type === 'A') {
        if (q.transport === 'udp') return { tc: true };
        return { answers: Array.from({ length: 100 }, (_, i) => ({ name: q.name, type: 'A' as const, ttl: 60, data: `192.0.2.${i + 1}` })) };
      }
      // only4.shop.corp.example: an address, no IPv6 one; only4.corp.example: an IPv6 one
      if (q.name === 'only4.shop.corp.example') return { answers: q.type === 'A' ? [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.40' }] : [] };
      if (q.name === 'only4.corp.example' && q.type === 'AAAA') return { answers: [{ name: q.name, type: 'AAAA', ttl: 60, data: '2001:db8::4' }] };
      const v4: Record<string, string> = { 'example.test': '192.0.2.10', 'db.corp.example': '192.0.2.20', 'mail.corp.example': '192.0.2.25', 'redis.corp.example': '192.0.2.99', 'cache.corp.example': '192.0.2.98' };
      const ip = q.type === 'A' ? v4[q.name] : undefined;
      return ip ? { answers: [{ name: q.name, type: 'A', ttl: 60, data: ip }] } : { rcode: 'NXDOMAIN' };
    },
  });
  t.after(() => upstream.close());
  const c = await startCluster({
    args,
    resolvConf: 'nameserver 192.0.2.53\nsearch corp.example\n',
    configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${upstream.port}`]) },
    seed: (api) => api.upsert('pods', pod('shop', 'web-0', [POD_IP, 'fd00::3:7'])),
  });
  t.after(() => c.stop());
  await waitSynced(c);
  const counts = async () => autopathCounts((await c.http('/metrics')).body);
  /** Through the handler, as if the packet came from `address` (the listeners pass theirs). */
  const handle = async (q: Buffer, address: string) => dnsPacket.decode((await c.dns.handler.handle(q, 'udp', address, 5353))!) as dnsPacket.DecodedPacket & { rcode: string };
  return { c, upstream, counts, handle };
}

test('autopath trusts the client-subnet option from loopback only, and only a valid one-address option', async (t) => {
  const { c, counts, handle, upstream } = await setup(t, ['--autopath']);
  // from loopback (kube-dns's own dnsmasq), with the pod's address: completed, over the real socket
  const ok = await askFrom('127.0.0.1', c.server, question(EXT, 'A', [subnetOf(POD_IP)]));
  assert.deepEqual(records(ok), [
    ['CNAME', EXT, 'example.test'],
    ['A', 'example.test', '192.0.2.10'],
  ]);
  assert.deepEqual(records(await handle(question(EXT, 'A', [subnetOf('fd00::3:7', 128)]), '::1'))[0], ['CNAME', EXT, 'example.test'], 'IPv6 pod address');

  const plain = async (q: Buffer, from: string, why: string) => {
    const r = await handle(q, from);
    assert.equal(r.rcode, 'NXDOMAIN', why);
    assert.equal(r.answers?.length ?? 0, 0, why);
  };
  // the same option from anywhere else: a client cannot claim to be another pod
  await plain(question(EXT, 'A', [subnetOf(POD_IP)]), '10.244.9.9', 'from a pod IP');
  await plain(question(EXT, 'A', [subnetOf(POD_IP)]), '::ffff:10.244.9.9', 'from a v4-mapped pod IP');
  // malformed from loopback: a /32 with three address octets
  const bad = question(EXT, 'A', [{ code: 8, data: Buffer.from([0, 1, 32, 0, 10, 244, 3]) }]);
  await plain(bad, '127.0.0.1', 'malformed option');
  // a /24 is a subnet, not a pod
  await plain(question(EXT, 'A', [subnetOf('10.244.3.0', 24)]), '127.0.0.1', 'partial subnet');
  // no option at all (dnsmasq without --add-subnet)
  await plain(question(EXT, 'A'), '127.0.0.1', 'no option');
  await plain(question(EXT, 'A', []), '127.0.0.1', 'EDNS0 without the option');

  const n = await counts();
  assert.equal(n.upstream, 2);
  assert.equal(n.untrusted_subnet, 2);
  assert.equal(n.malformed_subnet, 1);
  assert.equal(n.partial_subnet, 1);
  assert.equal(n.no_client_subnet, 2);
  // names that are not a first expansion are never considered, and existing names are unchanged
  await plain(question('example.test.shop.pod.cluster.local', 'A', [subnetOf(POD_IP)]), '127.0.0.1', 'pod zone');
  assert.deepEqual(await counts(), n);
  // a first label holding a dot (the one label "example.test", same length as the two it replaces)
  // cannot be asked upstream as the pod asked it: the plain answer, nothing asked upstream
  const dotted = question(EXT, 'A', [subnetOf(POD_IP)]);
  Buffer.concat([Buffer.from([12]), Buffer.from('example.test')]).copy(dotted, 12);
  const before = upstream.questions.length;
  await plain(dotted, '127.0.0.1', 'a dot inside a label');
  assert.equal(upstream.questions.length, before, `not asked upstream: ${JSON.stringify(upstream.questions.slice(before))}`);
  assert.deepEqual(await counts(), n);
});

test('autopath completes a lookup\'s first question only: the later names of a search left to the pod are its own, answered plainly', async (t) => {
  const { c, counts } = await setup(t, ['--autopath']);
  const SEARCH = ['shop.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'corp.example'];
  /**
   * What glibc in a ClusterFirst pod of shop (ndots:5) sends for `name`: the asked types of each
   * search name in turn, until a reply has records (NXDOMAIN and NODATA both go on).
   */
  const lookup = async (name: string, from = POD_IP, types: ('A' | 'AAAA')[] = ['A', 'AAAA']) => {
    const asked: string[] = [];
    for (const n of [...SEARCH.map((d) => `${name}.${d}`), name]) {
      asked.push(n);
      const rs = await Promise.all(types.map((ty) => askFrom('127.0.0.1', c.server, question(n, ty, [subnetOf(from)]))));
      if (rs.some((r) => (r.answers?.length ?? 0) > 0)) return { asked, found: rs };
    }
    return { asked, found: undefined };
  };
  // Service redis of the pod's own namespace, written svc.ns (`redis.shop`), and cache as its
  // full name (4 dots, searched first): neither exists. Plainly every name is NXDOMAIN; a CNAME
  // to redis.corp.example / cache.corp.example (kube-dns's node search domain) would send the
  // app to an unrelated host.
  for (const name of ['redis.shop', 'cache.shop.svc.cluster.local']) {
    const r = await lookup(name);
    assert.equal(r.found, undefined, `${name}: not found, as without autopath; got at ${r.asked.at(-1)}: ${JSON.stringify(r.found?.map(records))}`);
    assert.equal(r.asked.length, 5);
  }
  // after a walk that answered NODATA (only4.shop.corp.example has no IPv6 address), for one
  // address family: only4.shop.svc.cluster.local is not completed to only4.corp.example's
  const v6 = await lookup('only4.shop', POD_IP, ['AAAA']);
  assert.equal(v6.found, undefined, `no IPv6 address; got at ${v6.asked.at(-1)}: ${JSON.stringify(v6.found?.map(records))}`);
  const n = await counts();
  assert.equal(n.later_search_name, 2 + 2 + 1, 'redis.shop.svc.cluster.local and cache.shop.svc.cluster.local, A and AAAA; only4.shop.svc.cluster.local AAAA');
  assert.equal(n.not_found, 4, 'the first questions of redis.shop and cache.shop.svc.cluster.local');
  assert.equal(n.nodata, 1);
  assert.deepEqual([n.cluster, n.upstream], [0, 0], 'nothing completed');

  // from another pod of shop, whose search was not left to it, the same name is a first question:
  // completed. An absolute `redis.shop.svc.cluster.local.` is this question on the wire (CoreDNS too)
  c.api.upsert('pods', pod('shop', 'web-1', ['10.244.3.8']));
  await eventually(async () => {
    const r = await askFrom('127.0.0.1', c.server, question('redis.shop.svc.cluster.local', 'A', [subnetOf('10.244.3.8')]));
    assert.deepEqual(records(r)[0], ['CNAME', 'redis.shop.svc.cluster.local', 'redis.corp.example']);
  });
});

test("autopath walks the node's search domains before the bare name", async (t) => {
  const { c, upstream } = await setup(t, ['--autopath']);
  const r = await askFrom('127.0.0.1', c.server, question('db.shop.svc.cluster.local', 'A', [subnetOf(POD_IP)]));
  assert.deepEqual(records(r), [
    ['CNAME', 'db.shop.svc.cluster.local', 'db.corp.example'],
    ['A', 'db.corp.example', '192.0.2.20'],
  ]);
  assert.deepEqual(
    upstream.questions.map((q) => q.name).filter((n) => !n.endsWith('.loop-check.kube-dns.invalid')),
    ['db.corp.example'],
    'db.svc.cluster.local and db.cluster.local were answered from the zone, db.corp.example upstream, db itself not needed',
  );
});

test('autopath: a name without records of the asked type (NODATA) is NODATA without a CNAME, so glibc goes on; a dangling ExternalName is passed', async (t) => {
  const { c, counts } = await setup(t, ['--autopath']);
  // namespace mail has a Service, so mail.svc.cluster.local exists without an address (NODATA).
  // glibc takes NODATA as "try the next name" (mail.corp.example, which has one), but a CNAME
  // alone as the answer: the reply must not carry one (CoreDNS's autopath does the same)
  c.api.upsert('services', clusterIPService('mail', 'smtp', ['10.96.0.25']));
  c.api.upsert('services', externalNameService('mail', 'gone', 'gone.example.test'));
  await eventually(async () => assert.equal((await c.ask('smtp.mail.svc.cluster.local', 'A')).packet.rcode, 'NOERROR'));
  const r = await askFrom('127.0.0.1', c.server, question('mail.shop.svc.cluster.local', 'A', [subnetOf(POD_IP)]));
  assert.equal(r.rcode, 'NOERROR');
  assert.deepEqual(records(r), [], 'no CNAME, no address: glibc asks the next search name itself');
  assert.equal(r.authorities?.[0]?.type, 'SOA');
  // counted as nodata, not as a completion: the pod still asks mail.svc.cluster.local and the rest itself
  assert.deepEqual(await counts(), { ...zeroCounts, nodata: 1 });
  // gone.mail.svc.cluster.local is a CNAME to a name that does not exist (NXDOMAIN asked directly):
  // nothing further exists, so the plain NXDOMAIN, never a CNAME to nowhere
  const gone = await askFrom('127.0.0.1', c.server, question('gone.mail.shop.svc.cluster.local', 'A', [subnetOf(POD_IP)]));
  assert.equal(gone.rcode, 'NXDOMAIN');
  assert.equal(gone.answers?.length ?? 0, 0);
  assert.deepEqual(await counts(), { ...zeroCounts, nodata: 1, not_found: 1 });
});

test('autopath over UDP: an upstream answer too large for UDP comes back with TC, and whole over TCP', async (t) => {
  const { c } = await setup(t, ['--autopath']);
  const q = question('big.example.test.shop.svc.cluster.local', 'A', [subnetOf(POD_IP)]);
  const udp = dnsPacket.decode((await c.dns.handler.handle(q, 'udp', '127.0.0.1', 5353))!);
  assert.ok(udp.flag_tc, 'TC: the client asks again over TCP (a CNAME alone would end its search)');
  const tcp = dnsPacket.decode((await c.dns.handler.handle(q, 'tcp', '127.0.0.1', 5353))!);
  assert.ok(!tcp.flag_tc);
  assert.deepEqual(records(tcp as Parameters<typeof records>[0])[0], ['CNAME', 'big.example.test.shop.svc.cluster.local', 'big.example.test']);
  assert.equal((tcp.answers ?? []).filter((a) => a.type === 'A').length, 100);
});

test('without --autopath (the default) the first expansion is the plain NXDOMAIN and pods are not watched', async (t) => {
  const { c, counts } = await setup(t, []);
  const r = await askFrom('127.0.0.1', c.server, question(EXT, 'A', [subnetOf(POD_IP)]));
  assert.equal(r.rcode, 'NXDOMAIN');
  assert.ok(!c.api.requests.some((x) => x.resource === 'pods'), 'no Pods watch');
  assert.deepEqual(await counts(), {}, 'no autopath metric');
});

test('a walk has 2 s in all: with slow upstreams the pod gets the plain NXDOMAIN in time to ask its own search names; a walk that asked upstream is timed as recursive', async (t) => {
  // 3 node search domains and an upstream answering in 1.5 s: the walk's questions one after
  // another took 6 s, past musl's 5 s for a whole lookup and glibc's 5 s a try
  const upstream = await startTestDnsServer({
    handler: async (q) => {
      await new Promise((r) => setTimeout(r, q.name.startsWith('quick') ? 50 : 1500));
      return q.name === 'quick.test' && q.type === 'A' ? { answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.55' }] } : { rcode: 'NXDOMAIN' };
    },
  });
  t.after(() => upstream.close());
  const c = await startCluster({
    args: ['--autopath'],
    forwardTimeoutMs: 2000,
    resolvConf: 'nameserver 192.0.2.53\nsearch a.example b.example c.example\n',
    configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${upstream.port}`]) },
    seed: (api) => api.upsert('pods', pod('shop', 'web-0', [POD_IP])),
  });
  t.after(() => c.stop());
  await waitSynced(c);
  const started = Date.now();
  const r = await askFrom('127.0.0.1', c.server, question('slow.test.shop.svc.cluster.local', 'A', [subnetOf(POD_IP)]), 8000);
  const took = Date.now() - started;
  assert.equal(r.rcode, 'NXDOMAIN');
  assert.ok(took < 4000, `the plain answer after ${took} ms`);
  const metrics = (await c.http('/metrics')).body;
  assert.equal(autopathCounts(metrics).timeout, 1);

  // a completed walk that asked upstream: its time is the upstream's, not kube-dns's own
  const count = (body: string, system: string) => Number(new RegExp(`^kubedns_dns_request_duration_seconds_count\\{transport="udp",system="${system}"\\} (\\d+)`, 'm').exec(body)?.[1] ?? 0);
  const done = await askFrom('127.0.0.1', c.server, question('quick.test.shop.svc.cluster.local', 'A', [subnetOf(POD_IP)]), 8000);
  assert.deepEqual(records(done).map((x) => x[0]), ['CNAME', 'A']);
  const after = (await c.http('/metrics')).body;
  assert.equal(count(after, 'recursive') - count(metrics, 'recursive'), 1);
  assert.equal(count(after, 'auth'), count(metrics, 'auth'));
});
