// --autopath through the pod's real dnsmasq (the manifest's arguments plus the commented-out
// --add-subnet=32,128 / --autopath pair): clients ask from their own IPs, dnsmasq carries them
// to kube-dns as a client-subnet option, and each namespace gets only its own search path,
// including right after and at the same time as another namespace asked the same name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterIPService, pod } from '@kube-dns/testkit';
import { askFrom, autopathCounts, hostNetworkPod, manifestOptionalArg, question, records, startAutopathPod } from './autopath-helpers.js';
import { startPod } from './pod-through-dnsmasq.js';

const SHOP = '127.0.0.2'; // a pod of namespace shop
const BANK = '127.0.0.3'; // a pod of namespace bank
const HOSTNET = '127.0.0.4'; // the node's IP: hostNetwork pods of two namespaces
const REUSED = '127.0.0.5'; // an IP two namespaces' pods claim
const STRANGER = '127.0.0.9'; // no pod has it

test('autopath through dnsmasq: one round trip per name, each namespace its own search path, never a cached other one', async (t) => {
  const pod0 = await startAutopathPod((api) => {
    api.upsert('services', clusterIPService('bank', 'api', ['10.3.0.7']));
    api.upsert('pods', pod('shop', 'web-0', [SHOP]));
    api.upsert('pods', pod('bank', 'api-0', [BANK]));
    api.upsert('pods', hostNetworkPod('kube-system', 'proxy', HOSTNET));
    api.upsert('pods', hostNetworkPod('shop', 'agent', HOSTNET));
    api.upsert('pods', pod('shop', 'old', [REUSED]));
    api.upsert('pods', pod('bank', 'new', [REUSED]));
  });
  t.after(() => pod0.stop());
  const dnsmasq = { host: pod0.dnsmasq.host, port: pod0.dnsmasq.port };
  const ask = (from: string, name: string, type: 'A' | 'AAAA' = 'A') => askFrom(from, dnsmasq, question(name, type));
  const counts = async () => autopathCounts((await pod0.cluster.http('/metrics')).body);

  // an external name, first search expansion of a shop pod: CNAME to the name itself, its address
  const ext = 'example.test.shop.svc.cluster.local';
  const a = await ask(SHOP, ext);
  assert.equal(a.rcode, 'NOERROR');
  assert.deepEqual(records(a), [
    ['CNAME', ext, 'example.test'],
    ['A', 'example.test', '192.0.2.10'],
  ]);
  // no AAAA upstream: NODATA, NOERROR without a CNAME (a CNAME alone would end glibc's search
  // where NODATA lets it go on, as CoreDNS's autopath answers)
  const aaaa = await ask(SHOP, ext, 'AAAA');
  assert.equal(aaaa.rcode, 'NOERROR');
  assert.deepEqual(records(aaaa), []);

  // a Service of another namespace, asked by its short name `api.bank`: the cluster search name
  const other = await ask(SHOP, 'api.bank.shop.svc.cluster.local');
  assert.deepEqual(records(other), [
    ['CNAME', 'api.bank.shop.svc.cluster.local', 'api.bank.svc.cluster.local'],
    ['A', 'api.bank.svc.cluster.local', '10.3.0.7'],
  ]);
  // nothing by that name anywhere: the plain NXDOMAIN (the resolver goes on by itself)
  assert.equal((await ask(SHOP, 'nowhere.shop.svc.cluster.local')).rcode, 'NXDOMAIN');

  // the same question from bank, right after shop got its answer, alternating: never shop's
  for (let i = 0; i < 5; i++) {
    assert.equal((await ask(SHOP, ext)).answers?.length, 2, 'shop gets its completion');
    const b = await ask(BANK, ext);
    assert.equal(b.rcode, 'NXDOMAIN', 'bank must not get the shop pod\'s search path (nor a cached copy of it)');
    assert.equal(b.answers?.length ?? 0, 0);
  }
  // and at the same time (dnsmasq merges identical questions in flight; not these)
  const together = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(i % 2 ? BANK : SHOP, ext)));
  together.forEach((r, i) => assert.equal(r.rcode, i % 2 ? 'NXDOMAIN' : 'NOERROR', `question ${i}`));

  // bank's own first expansion of the same external name is completed for bank
  assert.deepEqual(records(await ask(BANK, 'example.test.bank.svc.cluster.local'))[0], ['CNAME', 'example.test.bank.svc.cluster.local', 'example.test']);

  // the node's IP (hostNetwork pods), an IP two namespaces claim, an IP of no pod: plain answers
  for (const from of [HOSTNET, REUSED, STRANGER]) {
    const r = await ask(from, ext);
    assert.equal(r.rcode, 'NXDOMAIN', from);
    assert.equal(r.answers?.length ?? 0, 0, from);
  }
  const c = await counts();
  assert.equal(c.upstream, 1 + 5 + 10 + 1, 'external completions');
  assert.equal(c.nodata, 1, 'the AAAA: NODATA completes nothing');
  assert.equal(c.cluster, 1);
  assert.equal(c.not_found, 1, 'nowhere.*');
  assert.equal(c.other_namespace, 5 + 10);
  assert.equal(c.host_network, 1);
  assert.equal(c.ambiguous_pod, 1);
  assert.equal(c.unknown_pod, 1);
  assert.equal(c.untrusted_subnet, 0, 'dnsmasq is on loopback: trusted');

  // a pod deleted, its IP taken by a pod of another namespace: the new pod's search path
  pod0.api.remove('pods', 'shop', 'old');
  const deadline = Date.now() + 5000;
  let r = await ask(REUSED, 'example.test.bank.svc.cluster.local');
  while (r.rcode !== 'NOERROR' && Date.now() < deadline) {
    await new Promise((res) => setTimeout(res, 20));
    r = await ask(REUSED, 'example.test.bank.svc.cluster.local');
  }
  assert.equal(r.rcode, 'NOERROR', 'the IP now belongs to bank alone');
  assert.equal((await ask(REUSED, 'example.test.shop.svc.cluster.local')).rcode, 'NXDOMAIN');
});

test('dnsmasq with --add-subnet caches no forwarded answer: external names reach the upstream every time', async (t) => {
  // what the README's autopath section reports: dnsmasq's cache is keyed by name only, so with a
  // per-client subnet it stops caching what it forwards (the price of telling clients apart)
  const pod0 = await startPod({ extraKubednsArgs: [manifestOptionalArg('--autopath')], extraDnsmasqArgs: [manifestOptionalArg('--add-subnet'), manifestOptionalArg('--strip-subnet')], seed: (api) => api.upsert('pods', pod('shop', 'web-0', [SHOP])) });
  t.after(() => pod0.stop());
  const dnsmasq = { host: pod0.dnsmasq.host, port: pod0.dnsmasq.port };
  const hits0 = await pod0.cacheHits();
  for (let i = 0; i < 5; i++) assert.equal((await askFrom(SHOP, dnsmasq, question('www.example.com'))).rcode, 'NOERROR');
  const asked = pod0.upstream.questions.filter((q) => q.name === 'www.example.com' && q.type === 'A').length;
  assert.equal(asked, 5, 'each repeat went upstream');
  assert.equal((await pod0.cacheHits()) - hits0, 0, 'no dnsmasq cache hit');
});
