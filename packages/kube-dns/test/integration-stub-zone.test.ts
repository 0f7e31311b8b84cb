// A stub domain inside the cluster zone (corp.cluster.local): with dnsmasq in front, as the
// original is deployed, dnsmasq's longest match sends its names to the stub server, and so do
// CoreDNS's server blocks (node-local-dns writes one per stub domain). kube-dns alone answered
// them NXDOMAIN from its records, silently. Now it forwards them too, and says so at config load,
// in its log and as a Warning Event on the ConfigMap; the zone itself as a stub domain cannot take
// the cluster's names away: it is left unused, with the same warning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger } from '@kube-dns/config';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService, externalNameService, startTestDnsServer, type KubeObject } from '@kube-dns/testkit';
import { eventually, startCluster, waitSynced, type Cluster } from './integration-helpers.js';

type Ev = KubeObject & { type: string; reason: string; message: string };
const events = (c: Cluster) => c.api.list('events', 'kube-system') as Ev[];

async function replaceKey(dir: string, key: string, content: string): Promise<void> {
  const tmp = join(dir, `.${key}.tmp`);
  await writeFile(tmp, content);
  await rename(tmp, join(dir, key));
}

test('a stub domain inside the cluster zone gets its names forwarded to its servers, with a warning; the zone itself stays ours', async (t) => {
  const stub = await startTestDnsServer({ answerIp: '192.0.2.60' });
  t.after(() => stub.close());
  const lines: { level: number; msg: string; domain?: string; key?: string }[] = [];
  const log = createLogger('kube-dns', 2, 'info', (line) => void lines.push(JSON.parse(line)));
  const c = await startCluster({ log, seed: (api) => api.upsert('services', clusterIPService('default', 'web', ['10.0.0.80'], [{ port: 80 }])) });
  t.after(() => c.stop());
  await waitSynced(c);
  const server = `127.0.0.1:${stub.port}`;

  await replaceKey(c.configDir, 'stubDomains', JSON.stringify({ 'corp.cluster.local': [server] }));
  await eventually(async () => assert.deepEqual(datas((await c.ask('db.corp.cluster.local', 'A')).packet.answers), ['192.0.2.60']), 3000);
  assert.deepEqual(
    stub.questions.filter((q) => q.type === 'A').map((q) => q.name),
    ['db.corp.cluster.local'],
    'asked of the stub server, as dnsmasq in front would',
  );
  const warned = lines.find((l) => l.level === 40 && l.domain === 'corp.cluster.local');
  assert.ok(warned, 'a warning at config load names the domain');
  assert.equal(warned.key, 'stubDomains');
  assert.match(warned.msg, /inside cluster\.local, a zone kube-dns answers: its names are forwarded/);
  await eventually(async () => {
    const e = events(c).find((x) => x.reason === 'StubDomainInClusterZone');
    assert.ok(e, `a Warning Event; have ${JSON.stringify(events(c).map((x) => x.reason))}`);
    assert.equal(e.type, 'Warning');
    assert.match(e.message, /stubDomains: corp\.cluster\.local/);
  }, 15_000, 50);
  // the rest of the zone is still answered from the cluster's records
  assert.deepEqual(datas((await c.ask('web.default.svc.cluster.local', 'A')).packet.answers), ['10.0.0.80']);

  // the zone itself as a stub domain: ignored with a warning (forwarding the whole zone away would
  // take every Service name with it)
  await replaceKey(c.configDir, 'stubDomains', JSON.stringify({ 'cluster.local': [server] }));
  await eventually(async () => assert.ok(lines.some((l) => l.level === 40 && l.domain === 'cluster.local'), 'warned'), 3000);
  const asked = () => stub.questions.filter((q) => q.type === 'A').length;
  const before = asked();
  assert.deepEqual(datas((await c.ask('web.default.svc.cluster.local', 'A')).packet.answers), ['10.0.0.80']);
  assert.equal((await c.ask('db.corp.cluster.local', 'A')).packet.rcode, 'NXDOMAIN', 'the zone is answered from the records');
  assert.equal(asked(), before, 'the stub server is not asked');

  // a reverse zone: the PTRs of the cluster's own addresses are answered from the records (the
  // stub server cannot know them), every other name in it goes to the stub server
  await replaceKey(c.configDir, 'stubDomains', JSON.stringify({ '10.in-addr.arpa': [server] }));
  await eventually(async () => {
    await c.ask('3.2.1.10.in-addr.arpa', 'PTR');
    assert.ok(stub.questions.some((q) => q.name === '3.2.1.10.in-addr.arpa'), 'forwarded to the stub server');
  }, 3000);
  assert.deepEqual(datas((await c.ask('80.0.0.10.in-addr.arpa', 'PTR')).packet.answers), ['web.default.svc.cluster.local.']);
  assert.ok(!stub.questions.some((q) => q.name === '80.0.0.10.in-addr.arpa'));
});

test('an ExternalName whose target is in a stub domain inside the zone is chased through the stub\'s servers', async (t) => {
  // dnsmasq in front of the original follows the CNAME to the stub domain's server; kube-dns
  // answered the target from its own records instead: NXDOMAIN for the Service's own name
  const stub = await startTestDnsServer({ answerIp: '203.0.113.9' });
  t.after(() => stub.close());
  const c = await startCluster({ seed: (api) => api.upsert('services', externalNameService('default', 'db', 'db.corp.cluster.local')) });
  t.after(() => c.stop());
  await waitSynced(c);
  // asked (and cached) before the stub domain exists: the target is the zone's, and absent
  assert.equal((await c.ask('db.default.svc.cluster.local', 'A')).packet.rcode, 'NXDOMAIN');
  await replaceKey(c.configDir, 'stubDomains', JSON.stringify({ 'corp.cluster.local': [`127.0.0.1:${stub.port}`] }));
  await eventually(async () => {
    const r = await c.ask('db.default.svc.cluster.local', 'A');
    assert.equal(r.packet.rcode, 'NOERROR');
    assert.deepEqual(
      (r.packet.answers ?? []).map((a) => `${a.type} ${a.name} ${String((a as { data?: unknown }).data)}`),
      ['CNAME db.default.svc.cluster.local db.corp.cluster.local', 'A db.corp.cluster.local 203.0.113.9'],
    );
  }, 3000);
  assert.ok(stub.questions.some((q) => q.name === 'db.corp.cluster.local' && q.type === 'A'), 'the target was asked of the stub server');
});

test('a stub domain inside the zone, once added, moves the SOA serial: secondaries transfer the zone again (without its names: zones-transfer-unit)', async (t) => {
  const stub = await startTestDnsServer({ answerIp: '203.0.113.9' });
  t.after(() => stub.close());
  const c = await startCluster({ args: ['--transfer-to=127.0.0.1'], seed: (api) => api.upsert('services', clusterIPService('legacy', 'db', ['10.0.0.50'])) });
  t.after(() => c.stop());
  await waitSynced(c);
  const serial = async () => ((await c.ask('cluster.local', 'SOA')).packet.answers?.[0] as { data: { serial: number } }).data.serial;
  await new Promise((r) => setTimeout(r, 1100)); // the serial moves at most once a second
  const before = await serial();
  await replaceKey(c.configDir, 'stubDomains', JSON.stringify({ 'legacy.svc.cluster.local': [`127.0.0.1:${stub.port}`] }));
  await eventually(async () => assert.ok((await serial()) > before, `serial ${await serial()} after ${before}`), 5000);
});
