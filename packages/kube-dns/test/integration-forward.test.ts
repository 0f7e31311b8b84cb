// Names outside the zone go to a real upstream (a dnsmasq on loopback serving a hosts file);
// the ConfigMap's upstreamNameservers and stubDomains apply without a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService, externalNameService, startDnsmasq, startTestDnsServer, tempDir } from '@kube-dns/testkit';
import { createLogger } from '@kube-dns/config';
import { editConfig, eventually, startCluster, waitSynced } from './integration-helpers.js';

test('forwarding to a real dnsmasq upstream: A, PTR misses, ExternalName targets; ConfigMap changes apply live', async (t) => {
  const dir = await tempDir();
  t.after(dir.cleanup);
  await writeFile(join(dir.path, 'hosts'), '192.0.2.123 my.test\n192.0.2.50 www.example.com\n');
  const upstream = await startDnsmasq([`--addn-hosts=${join(dir.path, 'hosts')}`]);
  t.after(() => upstream.stop());
  const other = await startTestDnsServer({ answerIp: '198.51.100.7' });
  t.after(() => other.close());
  const stub = await startTestDnsServer({ answerIp: '203.0.113.9' });
  t.after(() => stub.close());

  const c = await startCluster({
    configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${upstream.port}`]) },
    seed: (api) => {
      api.upsert('services', externalNameService('default', 'ext', 'www.example.com'));
      api.upsert('services', clusterIPService('default', 'svc', ['10.0.0.5']));
    },
  });
  t.after(() => c.stop());
  await waitSynced(c);

  assert.deepEqual(datas((await c.ask('my.test', 'A')).packet.answers), ['192.0.2.123']);
  assert.deepEqual(datas((await c.ask('my.test', 'A', { transport: 'tcp' })).packet.answers), ['192.0.2.123']);
  // a reverse name we do not own is forwarded (the original's e2e test, as in the kubernetes/dns tests)
  assert.deepEqual(datas((await c.ask('123.2.0.192.in-addr.arpa', 'PTR')).packet.answers), ['my.test.']);
  // ExternalName outside the zone: CNAME then the upstream's address
  assert.deepEqual(datas((await c.ask('ext.default.svc.cluster.local', 'A')).packet.answers), ['www.example.com.', '192.0.2.50']);
  assert.deepEqual(datas((await c.ask('ext.default.svc.cluster.local', 'CNAME')).packet.answers), ['www.example.com.']);

  // ConfigMap edit: another upstream and a stub domain, no restart
  await editConfig(c, 'upstreamNameservers', JSON.stringify([`127.0.0.1:${other.port}`]));
  await editConfig(c, 'stubDomains', JSON.stringify({ 'acme.local': [`127.0.0.1:${stub.port}`] }));
  // Two files, two edits: either may be applied first, so wait for both.
  await eventually(async () => {
    assert.deepEqual(datas((await c.ask('my.test', 'A')).packet.answers), ['198.51.100.7']);
    assert.deepEqual(datas((await c.ask('x.acme.local', 'A')).packet.answers), ['203.0.113.9']);
  }, 15_000);
  assert.equal(stub.questions.at(-1)?.name, 'x.acme.local');

  // an invalid edit is rejected, the last good config stays
  await editConfig(c, 'upstreamNameservers', '["1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"]');
  await eventually(async () => assert.match((await c.http('/metrics')).body, /kubedns_config_rejects_total 1/), 15_000);
  assert.deepEqual(datas((await c.ask('other.test', 'A')).packet.answers), ['198.51.100.7']);
  assert.match((await c.http('/metrics')).body, /kubedns_forward_requests_total\{server="127\.0\.0\.1:\d+"\} \d+/);
});

test('one upstream that lost the first datagram is asked again: an answer, not a SERVFAIL', async (t) => {
  // a node resolv.conf with one nameserver is the common case; one lost packet to it used to
  // cost the client a SERVFAIL after one try, with most of the forward's 5 s left
  const seen = new Set<string>();
  const up = await startTestDnsServer({
    handler: (q) => {
      if (!seen.has(q.name)) return seen.add(q.name), 'drop';
      return { answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.44' }] };
    },
  });
  t.after(() => up.close());
  const c = await startCluster({ configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${up.port}`]) } });
  t.after(() => c.stop());
  await waitSynced(c);
  const r = await c.ask('www.example.org', 'A', { timeoutMs: 4000 });
  assert.equal(r.packet.rcode, 'NOERROR');
  assert.deepEqual(datas(r.packet.answers), ['192.0.2.44']);
  assert.equal(up.questions.filter((q) => q.name === 'www.example.org').length, 2);
});

test('every upstream down: SERVFAIL after trying each (the original sent no reply at all)', async (t) => {
  const dead = await startTestDnsServer({ handler: () => 'drop' });
  t.after(() => dead.close());
  // what the operator reads: one warning per failing server, naming it and the reason
  const lines: { level: number; msg: string; server?: string; err?: string }[] = [];
  const log = createLogger('kube-dns', 2, 'debug', (l) => lines.push(JSON.parse(l)));
  const c = await startCluster({ log, configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${dead.port}`, '127.0.0.1:9']) } });
  t.after(() => c.stop());
  await waitSynced(c);
  const started = Date.now();
  // two queries at once: two forwards failing, for the one-warning-per-server check below
  const [r] = await Promise.all(['www.example.org', 'again.example.org'].map((n) => c.ask(n, 'A', { timeoutMs: 8000 })));
  assert.equal(r!.packet.rcode, 'SERVFAIL');
  // the forward's 5 s, with room for a loaded machine (the client waits 8)
  assert.ok(Date.now() - started < 7500, `within the forward's 5 s (${Date.now() - started} ms)`);
  // the silent one is asked again while time is left; the refused one (an error at once) is not
  const asked = dead.questions.filter((q) => q.name === 'www.example.org').length;
  assert.ok(asked >= 2, `the silent upstream was asked ${asked} times`);
  const warnings = lines.filter((l) => l.level === 40 && /upstream nameserver .* failed/.test(l.msg));
  assert.deepEqual(warnings.map((w) => w.server).sort(), [`127.0.0.1:${dead.port}`, '127.0.0.1:9'].sort(), 'one warning per server, not one per query');
  assert.ok(warnings.every((w) => w.err && w.err.length > 0), 'the warning says why');
});

test('an upstream that is kube-dns itself is refused (no forwarding loop); resolv.conf is the default', async (t) => {
  const up = await startTestDnsServer({ answerIp: '192.0.2.77' });
  t.after(() => up.close());
  // resolv.conf has a nameserver on the default port only: our test upstream is used through the flag
  const c = await startCluster({ resolvConf: 'nameserver 127.0.0.1\n', args: [] });
  t.after(() => c.stop());
  await waitSynced(c);
  // our own address as the only upstream: refused, so queries fail fast with SERVFAIL instead of looping
  await editConfig(c, 'upstreamNameservers', JSON.stringify([`127.0.0.1:${c.server.port}`]));
  await eventually(async () => assert.equal((await c.ask('loop.example', 'A', { timeoutMs: 3000 })).packet.rcode, 'SERVFAIL'), 3000);
  await editConfig(c, 'upstreamNameservers', JSON.stringify([`127.0.0.1:${up.port}`]));
  await eventually(async () => assert.deepEqual(datas((await c.ask('ok.example', 'A')).packet.answers), ['192.0.2.77']), 3000);
  assert.ok(!up.questions.some((q) => q.name === 'loop.example'));
});

test('--nameservers is ignored with --config-dir, as in the original: an empty upstreamNameservers means resolv.conf', async (t) => {
  const flagged = await startTestDnsServer({ answerIp: '192.0.2.88' });
  t.after(() => flagged.close());
  const configured = await startTestDnsServer({ answerIp: '192.0.2.99' });
  t.after(() => configured.close());
  // resolv.conf without a nameserver: no upstream at all, so names outside the cluster get SERVFAIL
  const c = await startCluster({ resolvConf: '', args: [`--nameservers=127.0.0.1:${flagged.port}`] });
  t.after(() => c.stop());
  await waitSynced(c);
  assert.equal((await c.ask('www.example.org', 'A')).packet.rcode, 'SERVFAIL');
  assert.equal(flagged.questions.length, 0, 'the --nameservers server is not asked');
  // the ConfigMap's upstreams apply as ever
  await editConfig(c, 'upstreamNameservers', JSON.stringify([`127.0.0.1:${configured.port}`]));
  await eventually(async () => assert.deepEqual(datas((await c.ask('www.example.org', 'A')).packet.answers), ['192.0.2.99']), 5000);
  assert.equal(flagged.questions.length, 0);
});

test('the error counters exist at 0 from the first scrape, so the first error is an increase() an alert sees', async (t) => {
  const upstream = await startTestDnsServer({ answerIp: '192.0.2.9' });
  t.after(() => upstream.close());
  const c = await startCluster({ configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${upstream.port}`]) } });
  t.after(() => c.stop());
  await waitSynced(c);
  await c.ask('www.example.org', 'A');
  const body = (await c.http('/metrics')).body;
  for (const resource of ['services', 'endpointslices']) assert.match(body, new RegExp(`^kubedns_kube_errors_total\\{resource="${resource}"\\} 0$`, 'm'));
  assert.match(body, new RegExp(`^kubedns_forward_failures_total\\{server="127\\.0\\.0\\.1:${upstream.port}"\\} 0$`, 'm'));
  assert.match(body, new RegExp(`^kubedns_forward_requests_total\\{server="127\\.0\\.0\\.1:${upstream.port}"\\} 1$`, 'm'));
});

test('an ExternalName whose target is NXDOMAIN or NODATA upstream: the CNAME, the rcode and the target zone\'s SOA (RFC 2308), so the negative answer can be cached', async (t) => {
  const soa = { name: 'example.com', type: 'SOA' as const, ttl: 300, data: { mname: 'ns.example.com', rname: 'hostmaster.example.com', serial: 7, refresh: 3600, retry: 600, expire: 86400, minimum: 120 } };
  const upstream = await startTestDnsServer({
    handler: (q) =>
      q.name === 'nx.example.com' ? { rcode: 'NXDOMAIN', authorities: [soa] } : q.type === 'AAAA' ? { authorities: [soa] } : { answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.5' }] },
  });
  t.after(() => upstream.close());
  const c = await startCluster({
    configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${upstream.port}`]) },
    seed: (api) => {
      api.upsert('services', externalNameService('t', 'gone', 'nx.example.com'));
      api.upsert('services', externalNameService('t', 'www', 'www.example.com'));
    },
  });
  t.after(() => c.stop());
  await waitSynced(c);
  const nx = await c.ask('gone.t.svc.cluster.local', 'A');
  assert.equal(nx.packet.rcode, 'NXDOMAIN');
  assert.deepEqual(nx.packet.answers?.map((a) => a.type), ['CNAME']);
  assert.deepEqual(nx.packet.authorities?.map((a) => `${a.name} ${a.type}`), ['example.com SOA']);
  const nodata = await c.ask('www.t.svc.cluster.local', 'AAAA');
  assert.equal(nodata.packet.rcode, 'NOERROR');
  assert.deepEqual(nodata.packet.authorities?.map((a) => `${a.name} ${a.type}`), ['example.com SOA']);
  const positive = await c.ask('www.t.svc.cluster.local', 'A');
  assert.deepEqual(datas(positive.packet.answers), ['www.example.com.', '192.0.2.5']);
  assert.deepEqual(positive.packet.authorities, [], 'a positive answer carries no SOA');
});

test('a stub server named by a cluster Service is used as soon as the Service exists, not 30 s later', async (t) => {
  // a question for the domain while the name had no address (before the initial sync, or before
  // the Service was created) used to keep "no address" for 30 s: SERVFAIL all that time
  const stub = await startTestDnsServer({ answerIp: '203.0.113.9' });
  t.after(() => stub.close());
  const c = await startCluster({ configFiles: { stubDomains: JSON.stringify({ 'acme.local': [`stubdns.default.svc.cluster.local:${stub.port}`] }) } });
  t.after(() => c.stop());
  await waitSynced(c);
  assert.equal((await c.ask('x.acme.local', 'A')).packet.rcode, 'SERVFAIL', 'no server for the domain yet');
  c.api.upsert('services', clusterIPService('default', 'stubdns', ['127.0.0.1']));
  await eventually(async () => assert.deepEqual(datas((await c.ask('stubdns.default.svc.cluster.local', 'A')).packet.answers), ['127.0.0.1']), 3000);
  const r = await c.ask('x.acme.local', 'A');
  assert.equal(r.packet.rcode, 'NOERROR');
  assert.deepEqual(datas(r.packet.answers), ['203.0.113.9']);
});
