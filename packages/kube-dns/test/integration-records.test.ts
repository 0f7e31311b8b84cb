// kube-dns end to end: fake API server → list/watch → zone → real UDP/TCP answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { datas, rdataText } from '@kube-dns/dns-client';
import { createLogger } from '@kube-dns/config';
import { clusterIPService, endpointSlice, externalNameService, headlessService } from '@kube-dns/testkit';
import { eventually, startCluster, waitSynced, type Cluster } from './integration-helpers.js';

let c: Cluster;

before(async () => {
  c = await startCluster({
    seed: (api) => {
      api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1'], [{ name: 'https', port: 443 }]));
      api.upsert('services', clusterIPService('default', 'dual', ['10.0.0.20', 'fd00::20'], [{ name: 'dns', port: 53, protocol: 'UDP' }, { port: 8080 }]));
      api.upsert('services', headlessService('default', 'headless', [{ name: 'http', port: 80 }]));
      api.upsert(
        'endpointslices',
        endpointSlice('default', 'headless', 'headless-a', 'IPv4', [{ ip: '10.1.0.1', hostname: 'pet-0' }, { ip: '10.1.0.2' }, { ip: '10.1.0.9', ready: false }], [{ name: 'http', port: 8080 }]),
      );
      api.upsert('endpointslices', endpointSlice('default', 'headless', 'headless-b', 'IPv4', [{ ip: '10.1.0.3' }, { ip: '10.1.0.2' }], [{ name: 'http', port: 8080 }]));
      api.upsert('endpointslices', endpointSlice('default', 'headless', 'headless-v6', 'IPv6', [{ ip: 'fd00::1:1', hostname: 'pet-0' }], [{ name: 'http', port: 8080 }]));
      api.upsert('services', headlessService('default', 'empty', [{ port: 80 }]));
      // two endpoints on one address (hostNetwork pods on one node, a selector-less Service's two instances on one host)
      api.upsert('services', headlessService('db', 'pg', [{ name: 'pg', port: 5432 }]));
      api.upsert('endpointslices', endpointSlice('db', 'pg', 'pg-a', 'IPv4', [{ ip: '10.1.5.5', hostname: 'primary' }, { ip: '10.1.5.5', hostname: 'replica' }, { ip: '10.1.5.6', hostname: 'other' }], [{ name: 'pg', port: 5432 }]));
      api.upsert('services', externalNameService('default', 'internal-alias', 'kubernetes.default.svc.cluster.local'));
      api.upsert('services', clusterIPService('big', 'many', ['10.9.0.1'], Array.from({ length: 60 }, (_, i) => ({ name: `p${i}`, port: 1000 + i }))));
    },
  });
  await waitSynced(c);
});
after(() => c.stop());

const Z = 'cluster.local';

test('ClusterIP service: A, AAAA (dual-stack), SRV with its address in additional, PTR for each family', async () => {
  assert.deepEqual(datas((await c.ask(`kubernetes.default.svc.${Z}`, 'A')).packet.answers), ['10.0.0.1']);
  const a = await c.ask(`dual.default.svc.${Z}`, 'A');
  assert.deepEqual(datas(a.packet.answers), ['10.0.0.20']);
  assert.equal(a.packet.flag_aa, true);
  assert.equal((a.packet.answers?.[0] as { ttl: number }).ttl, 30);
  assert.deepEqual(datas((await c.ask(`dual.default.svc.${Z}`, 'AAAA')).packet.answers), ['fd00::20']);
  const srv = await c.ask(`_dns._udp.dual.default.svc.${Z}`, 'SRV');
  assert.deepEqual(datas(srv.packet.answers), [`10 100 53 dual.default.svc.${Z}.`]);
  assert.deepEqual(datas(srv.packet.additionals).sort(), ['10.0.0.20', 'fd00::20']);
  const https = await c.ask(`_https._tcp.kubernetes.default.svc.${Z}`, 'SRV', { transport: 'tcp' });
  assert.deepEqual(datas(https.packet.answers), [`10 100 443 kubernetes.default.svc.${Z}.`]);
  assert.equal((await c.ask(`_https._udp.kubernetes.default.svc.${Z}`, 'SRV')).packet.rcode, 'NXDOMAIN');
  assert.deepEqual(datas((await c.ask('1.0.0.10.in-addr.arpa', 'PTR')).packet.answers), [`kubernetes.default.svc.${Z}.`]);
  const v6ptr = '0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa';
  assert.deepEqual(datas((await c.ask(v6ptr, 'PTR')).packet.answers), [`dual.default.svc.${Z}.`]);
});

test('headless service: ready endpoints merged across slices once each, hostnames, SRV per endpoint, PTR', async () => {
  const a = await c.ask(`headless.default.svc.${Z}`, 'A');
  assert.deepEqual(datas(a.packet.answers).sort(), ['10.1.0.1', '10.1.0.2', '10.1.0.3'], 'not-ready 10.1.0.9 left out, 10.1.0.2 once');
  assert.deepEqual(datas((await c.ask(`headless.default.svc.${Z}`, 'AAAA')).packet.answers), ['fd00::1:1']);
  assert.deepEqual(datas((await c.ask(`pet-0.headless.default.svc.${Z}`, 'A')).packet.answers), ['10.1.0.1']);
  assert.deepEqual(datas((await c.ask(`pet-0.headless.default.svc.${Z}`, 'AAAA')).packet.answers), ['fd00::1:1']);
  assert.deepEqual(datas((await c.ask(`10-1-0-3.headless.default.svc.${Z}`, 'A')).packet.answers), ['10.1.0.3']);
  const srv = await c.ask(`_http._tcp.headless.default.svc.${Z}`, 'SRV');
  const targets = datas(srv.packet.answers).sort();
  assert.deepEqual(targets, [
    `10 33 8080 10-1-0-2.headless.default.svc.${Z}.`,
    `10 33 8080 10-1-0-3.headless.default.svc.${Z}.`,
    `10 33 8080 pet-0.headless.default.svc.${Z}.`,
  ]);
  assert.ok(datas(srv.packet.additionals).includes('10.1.0.1'));
  assert.deepEqual(datas((await c.ask('1.0.1.10.in-addr.arpa', 'PTR')).packet.answers), [`pet-0.headless.default.svc.${Z}.`]);
  assert.equal((await c.ask(`pet-9.headless.default.svc.${Z}`, 'A')).packet.rcode, 'NXDOMAIN');
  assert.equal((await c.ask(`empty.default.svc.${Z}`, 'A')).packet.rcode, 'NXDOMAIN', 'no ready endpoints: NXDOMAIN (spec 2.4.1)');
});

test('ExternalName inside the zone is chased; NXDOMAIN vs NODATA both carry the SOA', async () => {
  const r = await c.ask(`internal-alias.default.svc.${Z}`, 'A');
  assert.deepEqual(datas(r.packet.answers), [`kubernetes.default.svc.${Z}.`, '10.0.0.1']);
  const nodata = await c.ask(`kubernetes.default.svc.${Z}`, 'AAAA');
  assert.equal(nodata.packet.rcode, 'NOERROR');
  assert.equal(nodata.packet.answers?.length, 0);
  assert.equal(nodata.packet.authorities?.[0]?.type, 'SOA');
  assert.equal(nodata.packet.flag_aa, true);
  const nx = await c.ask(`nosuch.default.svc.${Z}`, 'A');
  assert.equal(nx.packet.rcode, 'NXDOMAIN');
  assert.equal(nx.packet.flag_aa, true);
  const soa = nx.packet.authorities?.[0];
  assert.equal(soa?.type, 'SOA');
  assert.match(rdataText(soa!), new RegExp(`^ns\\.dns\\.${Z}\\. hostmaster\\.${Z}\\. \\d+ 28800 7200 604800 30$`));
});

test('apex records, dns-version, pods, case preservation', async () => {
  assert.deepEqual(datas((await c.ask(`dns-version.${Z}`, 'TXT')).packet.answers), ['"1.1.0"']);
  assert.deepEqual(datas((await c.ask(Z, 'NS')).packet.answers), [`ns.dns.${Z}.`]);
  assert.equal((await c.ask(Z, 'SOA')).packet.answers?.[0]?.type, 'SOA');
  assert.deepEqual(datas((await c.ask(`10-2-3-4.anyns.pod.${Z}`, 'A')).packet.answers), ['10.2.3.4']);
  const srvOnPod = await c.ask(`10-2-3-4.anyns.pod.${Z}`, 'SRV');
  assert.equal(srvOnPod.packet.rcode, 'NOERROR', 'the original crashed on this; we answer NODATA');
  const mixed = await c.ask(`KuBeRnEtEs.Default.SVC.Cluster.Local`, 'A');
  assert.equal(mixed.packet.questions?.[0]?.name, 'KuBeRnEtEs.Default.SVC.Cluster.Local');
  assert.equal(mixed.packet.answers?.[0]?.name, 'KuBeRnEtEs.Default.SVC.Cluster.Local');
  assert.deepEqual(datas(mixed.packet.answers), ['10.0.0.1']);
});

test('a large SRV answer is truncated over UDP (TC) and complete over TCP; EDNS raises the UDP limit', async () => {
  const name = `many.big.svc.${Z}`;
  const udp = await c.ask(name, 'SRV');
  assert.equal(udp.packet.flag_tc, true);
  assert.ok(udp.bytes.length <= 512);
  const edns = await c.ask(name, 'SRV', { ednsUdpSize: 4096 });
  assert.ok(edns.bytes.length > 512 && edns.bytes.length <= 4096);
  const tcp = await c.ask(name, 'SRV', { transport: 'tcp' });
  assert.equal(tcp.packet.flag_tc, false);
  assert.equal(tcp.packet.answers?.length, 60);
  const retried = await c.ask(name, 'SRV', { retryTcpOnTruncation: true });
  assert.equal(retried.packet.answers?.length, 60);
});

test('HTTP: /readiness 200 once synced, /healthz, /cache lists the records, /metrics counts queries', async () => {
  assert.equal((await c.http('/readiness')).status, 200);
  assert.equal((await c.http('/healthz')).status, 200);
  const cache = await c.http('/cache');
  assert.equal(cache.status, 200);
  assert.match(cache.body, /kubernetes/);
  assert.match(cache.body, /10\.1\.0\.1/);
  const m = await c.http('/metrics');
  assert.match(m.body, /kubedns_dns_requests_total\{qtype="A",rcode="NOERROR",transport="udp"\} \d+/);
  assert.match(m.body, /skydns_skydns_dns_request_count_total\{system="auth"\} \d+/);
  assert.match(m.body, /kubedns_records\{kind="services"\} 7/);
});

test('a large headless service has its view built at the initial sync (logged), and answers from it', async (t) => {
  const lines: string[] = [];
  const big = await startCluster({
    log: createLogger('kube-dns', 2, 'info', (l) => lines.push(l)),
    seed: (api) => {
      api.upsert('services', headlessService('db', 'pg', [{ name: 'pg', port: 5432 }]));
      for (let i = 0; i < 6; i++) {
        api.upsert('endpointslices', endpointSlice('db', 'pg', `pg-${i}`, 'IPv4', Array.from({ length: 100 }, (_, k) => ({ ip: `10.7.${i}.${k}` })), [{ name: 'pg', port: 5432 }]));
      }
      api.upsert('services', headlessService('db', 'few', [{ port: 80 }]));
      api.upsert('endpointslices', endpointSlice('db', 'few', 'few-a', 'IPv4', [{ ip: '10.8.0.1' }], [{ port: 80 }]));
    },
  });
  t.after(() => big.stop());
  await waitSynced(big);
  const built = lines.map((l) => JSON.parse(l) as { msg: string; views?: number; minEndpoints?: number }).find((l) => l.msg === 'built the views of the large headless services');
  assert.equal(built?.views, 1, 'the 600-endpoint service only');
  const a = await big.ask(`pg.db.svc.${Z}`, 'A', { transport: 'tcp' });
  assert.ok(a.packet.answers!.length > 0 && datas(a.packet.answers).every((ip) => ip.startsWith('10.7.')));
  assert.deepEqual(datas((await big.ask(`few.db.svc.${Z}`, 'A')).packet.answers), ['10.8.0.1']);

  // after the sync: a Service whose slices reach 500 endpoints answers as it grows, its Service
  // object's ports change (the view and the PTR entries are kept), a slice goes
  const ptr = async (ip: string) => datas((await big.ask(ip.split('.').reverse().join('.') + '.in-addr.arpa', 'PTR')).packet.answers);
  big.api.upsert('services', headlessService('db', 'late', [{ name: 'pg', port: 5432 }]));
  for (let i = 0; i < 7; i++) {
    big.api.upsert('endpointslices', endpointSlice('db', 'late', `late-${i}`, 'IPv4', Array.from({ length: 100 }, (_, k) => ({ ip: `10.9.${i}.${k}` })), [{ name: 'pg', port: 5432 }]));
  }
  await eventually(async () => assert.deepEqual(await ptr('10.9.6.7'), [`10-9-6-7.late.db.svc.${Z}.`]), 5000);
  big.api.upsert('services', headlessService('db', 'late', [{ name: 'pg', port: 5433 }]));
  big.api.upsert('endpointslices', endpointSlice('db', 'late', 'late-extra', 'IPv4', [{ ip: '10.9.2.2', hostname: 'extra' }], [{ name: 'pg', port: 5432 }]));
  big.api.remove('endpointslices', 'db', 'late-3');
  await eventually(async () => assert.deepEqual(await ptr('10.9.3.3'), []), 5000);
  assert.deepEqual(await ptr('10.9.2.2'), [`extra.late.db.svc.${Z}.`], 'one PTR, though two slices list it: named by the slice that has a hostname');
  assert.deepEqual(await ptr('10.9.4.4'), [`10-9-4-4.late.db.svc.${Z}.`]);
  const tcp = await big.ask(`late.db.svc.${Z}`, 'A', { transport: 'tcp' });
  assert.equal(tcp.packet.answers!.length, 600, 'slices 0-2 and 4-6; 10.9.2.2 once');
});

test('two endpoints sharing an address each have their name: an A record, an SRV target and a PTR each (spec 2.4.1-2.4.3)', async () => {
  // only the first hostname used to resolve; the second was NXDOMAIN, missing from SRV and PTR
  for (const name of ['primary', 'replica']) assert.deepEqual(datas((await c.ask(`${name}.pg.db.svc.${Z}`, 'A')).packet.answers), ['10.1.5.5'], name);
  assert.deepEqual(datas((await c.ask(`pg.db.svc.${Z}`, 'A')).packet.answers).sort(), ['10.1.5.5', '10.1.5.6'], "the Service's own name lists the address once");
  const srv = await c.ask(`_pg._tcp.pg.db.svc.${Z}`, 'SRV');
  assert.deepEqual(datas(srv.packet.answers).sort(), [`10 33 5432 other.pg.db.svc.${Z}.`, `10 33 5432 primary.pg.db.svc.${Z}.`, `10 33 5432 replica.pg.db.svc.${Z}.`]);
  assert.deepEqual(datas((await c.ask('5.5.1.10.in-addr.arpa', 'PTR')).packet.answers).sort(), [`primary.pg.db.svc.${Z}.`, `replica.pg.db.svc.${Z}.`]);
  // one of them gone: its name with it
  c.api.upsert('endpointslices', endpointSlice('db', 'pg', 'pg-a', 'IPv4', [{ ip: '10.1.5.5', hostname: 'primary' }, { ip: '10.1.5.6', hostname: 'other' }], [{ name: 'pg', port: 5432 }]));
  await eventually(async () => assert.equal((await c.ask(`replica.pg.db.svc.${Z}`, 'A')).packet.rcode, 'NXDOMAIN'));
  assert.deepEqual(datas((await c.ask('5.5.1.10.in-addr.arpa', 'PTR')).packet.answers), [`primary.pg.db.svc.${Z}.`]);
});
