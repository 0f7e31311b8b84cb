// --external-zone: Services reachable from outside answered under a zone an outside DNS server
// delegates to (A/AAAA, SRV, CNAME for a hostname ingress, SOA/NS at the apex), over real UDP/TCP.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService, externalService, type FakeApiServer } from '@kube-dns/testkit';
import { eventually, startCluster, waitSynced, type Cluster } from './integration-helpers.js';
import { parseOptions } from '../src/options.js';

const E = 'example.com';
const seed = (api: FakeApiServer): void => {
  api.upsert('services', externalService('shop', 'web', '10.10.0.1', { ingress: ['203.0.113.10', '2001:db8::10'], ports: [{ name: 'https', port: 443 }, { port: 80 }] }));
  api.upsert('services', externalService('shop', 'legacy', '10.10.0.2', { externalIPs: ['198.51.100.7'] }));
  api.upsert('services', externalService('shop', 'elb', '10.10.0.3', { ingress: ['abc123.elb.amazonaws.com'], ports: [{ name: 'http', port: 80 }] }));
  api.upsert('services', externalService('shop', 'pending', '10.10.0.4', { ingress: [] }));
  api.upsert('services', clusterIPService('shop', 'internal', ['10.10.0.5']));
  api.upsert('services', clusterIPService('payments-internal', 'ledger', ['10.10.0.9']));
  // a Service at the NS host's own name, with an outside address
  api.upsert('services', externalService('dns', 'ns1', '10.10.0.53', { ingress: ['203.0.113.53'] }));
};

let on: Cluster;
let off: Cluster;
before(async () => {
  [on, off] = await Promise.all([startCluster({ args: ['--external-zone=example.com.', '--external-ns=ns1.dns.example.com'], seed }), startCluster({ seed })]);
  await Promise.all([waitSynced(on), waitSynced(off)]);
});
after(() => Promise.all([on.stop(), off.stop()]));

test('LoadBalancer ingress IPs and externalIPs answer A/AAAA, authoritatively', async () => {
  const a = await on.ask(`web.shop.${E}`, 'A');
  assert.equal(a.packet.flag_aa, true);
  assert.deepEqual(datas(a.packet.answers), ['203.0.113.10']);
  assert.deepEqual(datas((await on.ask(`WEB.Shop.${E}`, 'AAAA', { transport: 'tcp' })).packet.answers), ['2001:db8::10']);
  assert.deepEqual(datas((await on.ask(`legacy.shop.${E}`, 'A')).packet.answers), ['198.51.100.7']);
});

test('SRV per named port, with the addresses in additional', async () => {
  const srv = await on.ask(`_https._tcp.web.shop.${E}`, 'SRV');
  assert.deepEqual(datas(srv.packet.answers), [`10 100 443 web.shop.${E}.`]);
  assert.deepEqual(datas(srv.packet.additionals).sort(), ['2001:db8::10', '203.0.113.10']);
  assert.deepEqual(datas((await on.ask(`web.shop.${E}`, 'SRV')).packet.answers), [`10 100 443 web.shop.${E}.`], 'unnamed port 80 has no SRV');
  assert.equal((await on.ask(`_http._udp.web.shop.${E}`, 'SRV')).packet.rcode, 'NXDOMAIN');
});

test('an ingress hostname is a CNAME', async () => {
  const r = await on.ask(`elb.shop.${E}`, 'A');
  assert.deepEqual(r.packet.answers?.map((x) => `${x.type} ${String((x as { data: unknown }).data)}`), ['CNAME abc123.elb.amazonaws.com']);
});

test('SOA and NS at the apex; a Service without an outside address, or no Service, is NXDOMAIN with the SOA', async () => {
  const soa = await on.ask(E, 'SOA');
  const s = soa.packet.answers?.[0] as { type: string; data: { mname: string; serial: number } };
  assert.equal(s.type, 'SOA');
  assert.equal(s.data.mname, `ns1.dns.${E}`);
  assert.deepEqual(datas((await on.ask(E, 'NS')).packet.answers), [`ns1.dns.${E}.`]);
  for (const name of [`pending.shop.${E}`, `internal.shop.${E}`, `nothing.shop.${E}`, `web.nowhere.${E}`]) {
    const r = await on.ask(name, 'A');
    assert.equal(r.packet.rcode, 'NXDOMAIN', name);
    assert.equal(r.packet.authorities?.[0]?.type, 'SOA', name);
    assert.equal(r.packet.authorities?.[0]?.name, E, name);
  }
  assert.equal((await on.ask(`shop.${E}`, 'A')).packet.rcode, 'NOERROR', 'a namespace with services is an empty non-terminal');
  // a namespace of internal Services alone has no name below it here: asked from outside, the
  // zone does not tell that it exists (and a secondary, which has no record there, agrees)
  assert.equal((await on.ask(`payments-internal.${E}`, 'A')).packet.rcode, 'NXDOMAIN');
  // (asked twice: the second answer comes from what the first looked at, until the zone changes)
  assert.equal((await on.ask(`payments-internal.${E}`, 'A')).packet.rcode, 'NXDOMAIN');
  // ... and it exists once one of its Services has an outside address
  on.api.upsert('services', externalService('payments-internal', 'gateway', '10.10.0.10', { ingress: ['203.0.113.20'] }));
  await eventually(async () => assert.equal((await on.ask(`payments-internal.${E}`, 'A')).packet.rcode, 'NOERROR'), 3000);
  on.api.remove('services', 'payments-internal', 'gateway');
  await eventually(async () => assert.equal((await on.ask(`payments-internal.${E}`, 'A')).packet.rcode, 'NXDOMAIN'), 3000);
});

test('a Service at the NS host\'s name keeps its address (the NODATA there is only for what would not exist)', async () => {
  assert.deepEqual(datas((await on.ask(`ns1.dns.${E}`, 'A')).packet.answers), ['203.0.113.53']);
});

test('an ingress assigned later shows up', async () => {
  on.api.upsert('services', externalService('shop', 'pending', '10.10.0.4', { ingress: ['203.0.113.44'] }));
  await eventually(async () => assert.deepEqual(datas((await on.ask(`pending.shop.${E}`, 'A')).packet.answers), ['203.0.113.44']), 5000);
});

test('off (the default): the external zone is not ours (forwarded, no authoritative answer)', async () => {
  const r = await off.ask(`web.shop.${E}`, 'A');
  assert.notEqual(r.packet.flag_aa, true);
  assert.equal(r.packet.answers?.length ?? 0, 0);
});

test('flag errors: an external zone overlapping the cluster domain or another external zone', () => {
  assert.throws(() => parseOptions(['--external-zone=svc.cluster.local']), /--external-zone=svc.cluster.local: overlaps the cluster domain cluster.local/);
  assert.throws(() => parseOptions(['--external-zone=example.com,a.example.com']), /overlaps --external-zone=example.com/);
  assert.throws(() => parseOptions(['--external-zone=exa mple.com']), /not a valid DNS name/);
  // arpa itself holds the reverse zones too: it would answer home.arpa (RFC 8375) authoritatively
  for (const z of ['arpa', 'ARPA.', 'in-addr.arpa', 'home.arpa']) assert.throws(() => parseOptions([`--external-zone=${z}`]), /reverse zones are the cluster's/, z);
  assert.deepEqual(parseOptions(['--external-zone=A.example.', '--external-zone=b.example']).zones.externalZones, ['a.example', 'b.example']);
});

test('the names between the NS host and the apex exist (empty non-terminals): NODATA, never NXDOMAIN', async () => {
  // an NXDOMAIN at dns.example.com says nothing exists below it (RFC 8020), ns1.dns.example.com
  // included: a resolver that believes it, or minimises the question (RFC 9156), loses the NS host
  // (ns1.dns has a Service with an IPv4 address here: its AAAA is the NODATA of the NS host)
  for (const [name, type] of [[`dns.${E}`, 'A'], [`DNS.${E}`, 'A'], [`ns1.dns.${E}`, 'AAAA']] as const) {
    const r = await on.ask(name, type);
    assert.deepEqual([r.packet.rcode, r.packet.flag_aa, r.packet.answers?.length], ['NOERROR', true, 0], name);
    assert.equal(r.packet.authorities?.[0]?.type, 'SOA', name);
  }
  assert.equal((await on.ask(`ns2.dns.${E}`, 'A')).packet.rcode, 'NXDOMAIN', 'a sibling of the NS host does not exist');
});

test('--external-ttl: the external zone\'s records and SOA minimum carry it, the cluster zone keeps --ttl (the manifest\'s 0)', async (t) => {
  const c = await startCluster({ args: ['--external-zone=example.com', '--external-ttl=300', '--ttl=0'], seed });
  t.after(() => c.stop());
  await waitSynced(c);
  assert.deepEqual((await c.ask(`web.shop.${E}`, 'A')).packet.answers?.map((a) => (a as { ttl?: number }).ttl), [300]);
  const neg = await c.ask(`nothing.shop.${E}`, 'A');
  const soa = neg.packet.authorities?.[0] as { ttl: number; data: { minimum: number } };
  assert.deepEqual([soa.ttl, soa.data.minimum], [300, 300], 'negative answers cached as long');
  assert.deepEqual((await c.ask('internal.shop.svc.cluster.local', 'A')).packet.answers?.map((a) => (a as { ttl?: number }).ttl), [0]);
  // without it, --ttl for both (as before the flag)
  assert.deepEqual((await on.ask(`web.shop.${E}`, 'A')).packet.answers?.map((a) => (a as { ttl?: number }).ttl), [30]);
});
