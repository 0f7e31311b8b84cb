// The /cache listing (records/dump.ts): every record of every service, exactly as DNS answers it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dumpJson, serviceRecordBatches, type ZoneDump } from '../src/records/dump.js';
import type { Zone } from '../src/records/zone.js';
import { clusterIP, ep, externalName, headless, OPTS, port, q, slice, zoneWith } from './resolve-fixtures.js';

const ZN = 'cluster.local';

function dump(z: Zone): ZoneDump {
  return JSON.parse([...dumpJson(z, OPTS)].join('')) as ZoneDump;
}

const text = (d: ZoneDump, name: string): string[] =>
  d.services.find((s) => s.name === name)!.records.map((r) => `${r.name} ${r.type} ${r.data}`);

test('dump lists every record of every service', () => {
  const z = zoneWith(
    clusterIP('default', 'kubernetes', ['10.0.0.1', 'fd00::1'], [port('https', 443), port('', 8080)]),
    headless('default', 'web'),
    externalName('default', 'ext', 'www.example.com'),
    externalName('default', 'ext-ip', '192.0.2.7'),
  );
  z.setSlice(slice('default', 'web-1', 'web', [ep('10.1.0.1', 'pet-0'), ep('10.1.0.2'), ep('10.1.0.3', '', false)], [port('http', 80)]));
  z.setPod({ namespace: 'default', name: 'p', ips: ['10.1.0.9'] });
  const d = dump(z);
  assert.equal(d.zone, ZN);
  assert.equal(d.generation, z.generation);
  assert.deepEqual(d.pods, [{ namespace: 'default', name: 'p', ips: ['10.1.0.9'] }]);
  assert.deepEqual(d.services.map((s) => `${s.namespace}/${s.name} ${s.kind}`), [
    'default/ext ExternalName',
    'default/ext-ip ExternalName',
    'default/kubernetes ClusterIP',
    'default/web Headless',
  ]);
  assert.deepEqual(text(d, 'ext'), ['ext.default.svc.cluster.local CNAME www.example.com.']);
  // An IP-looking externalName is answered with an address, not a CNAME: so is it listed.
  assert.deepEqual(text(d, 'ext-ip'), ['ext-ip.default.svc.cluster.local A 192.0.2.7']);
  assert.deepEqual(text(d, 'kubernetes').sort(), [
    '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa PTR kubernetes.default.svc.cluster.local.',
    '1.0.0.10.in-addr.arpa PTR kubernetes.default.svc.cluster.local.',
    '_https._tcp.kubernetes.default.svc.cluster.local SRV 10 100 443 kubernetes.default.svc.cluster.local.',
    'kubernetes.default.svc.cluster.local A 10.0.0.1',
    'kubernetes.default.svc.cluster.local AAAA fd00::1',
    'kubernetes.default.svc.cluster.local SRV 10 50 443 kubernetes.default.svc.cluster.local.',
    'kubernetes.default.svc.cluster.local SRV 10 50 8080 kubernetes.default.svc.cluster.local.',
  ]);
  assert.deepEqual(text(d, 'web').sort(), [
    '1.0.1.10.in-addr.arpa PTR pet-0.web.default.svc.cluster.local.',
    '10-1-0-2.web.default.svc.cluster.local A 10.1.0.2',
    '2.0.1.10.in-addr.arpa PTR 10-1-0-2.web.default.svc.cluster.local.',
    '_http._tcp.web.default.svc.cluster.local SRV 10 50 80 10-1-0-2.web.default.svc.cluster.local.',
    '_http._tcp.web.default.svc.cluster.local SRV 10 50 80 pet-0.web.default.svc.cluster.local.',
    'pet-0.web.default.svc.cluster.local A 10.1.0.1',
    'web.default.svc.cluster.local A 10.1.0.1',
    'web.default.svc.cluster.local A 10.1.0.2',
    'web.default.svc.cluster.local SRV 10 50 80 10-1-0-2.web.default.svc.cluster.local.',
    'web.default.svc.cluster.local SRV 10 50 80 pet-0.web.default.svc.cluster.local.',
  ]);
});

test('every listed record is what a DNS question for it is answered with', () => {
  const z = zoneWith(clusterIP('a', 'svc', ['10.0.0.5'], [port('dns', 53, 'UDP'), port('dns-tcp', 53)]), headless('a', 'h'));
  // Two slices listing one address with different ports: the merged view answers both ports.
  z.setSlice(slice('a', 'h-1', 'h', [ep('10.2.0.1', 'x'), ep('fd00::2:2')], [port('http', 80)]));
  z.setSlice(slice('a', 'h-2', 'h', [ep('10.2.0.1', 'x')], [port('grpc', 9000)]));
  const d = dump(z);
  let n = 0;
  for (const s of d.services) {
    for (const r of s.records) {
      const got = q(z, r.name, r.type).answers.filter((a) => a.type === r.type);
      const datas = got.map((a) =>
        a.type === 'SRV' ? `${a.data.priority} ${a.data.weight} ${a.data.port} ${a.data.target}.` : a.type === 'A' || a.type === 'AAAA' ? a.data : `${String((a as { data: unknown }).data)}.`,
      );
      assert.ok(datas.includes(r.data), `${r.name} ${r.type} ${r.data} not in the DNS answer ${JSON.stringify(datas)}`);
      n++;
    }
  }
  assert.ok(n >= 15, `${n} records checked`);
  assert.ok(text(d, 'h').includes('_grpc._tcp.h.a.svc.cluster.local SRV 10 100 9000 x.h.a.svc.cluster.local.'));
  assert.ok(text(d, 'h').includes('2.0.0.0.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.f.ip6.arpa PTR fd00--2-2.h.a.svc.cluster.local.'));
});

test('an IP shared by two services: each lists only the PTR into itself', () => {
  const z = zoneWith(headless('a', 'h1'), headless('b', 'h2'));
  z.setSlice(slice('a', 'h1-1', 'h1', [ep('10.3.0.1', 'one')]));
  z.setSlice(slice('b', 'h2-1', 'h2', [ep('10.3.0.1', 'two')]));
  const d = dump(z);
  assert.deepEqual(text(d, 'h1').filter((l) => l.includes('PTR')), ['1.0.3.10.in-addr.arpa PTR one.h1.a.svc.cluster.local.']);
  assert.deepEqual(text(d, 'h2').filter((l) => l.includes('PTR')), ['1.0.3.10.in-addr.arpa PTR two.h2.b.svc.cluster.local.']);
});

test('names are sorted across sort slices; changes between pieces leave valid JSON', () => {
  const z = zoneWith();
  const names: string[] = [];
  for (let i = 0; i < 5000; i++) {
    const name = `s${(i * 7919) % 5000}`;
    names.push(name);
    z.setService(clusterIP('big', name, [`10.9.${i >> 8}.${i & 255}`]));
  }
  z.setService(clusterIP('aaa', 'first', ['10.8.0.1']));
  const it = dumpJson(z, OPTS);
  const pieces: string[] = [];
  let i = 0;
  for (const p of it) {
    pieces.push(p);
    // Mid-listing: delete a service not listed yet and add one; the listing stays well-formed.
    if (++i === 100) {
      z.deleteService('big', 's999');
      z.setService(clusterIP('zzz', 'late', ['10.8.0.2']));
    }
  }
  const d = JSON.parse(pieces.join('')) as ZoneDump;
  const listed = d.services.map((s) => `${s.namespace}/${s.name}`);
  const want = ['aaa/first', ...names.filter((n) => n !== 's999').sort().map((n) => `big/${n}`)];
  assert.deepEqual(listed.filter((x) => !x.startsWith('zzz/')), want);
});

test('a headless service with thousands of endpoints is listed in batches, with pause points between them, and whole', () => {
  const z = zoneWith(headless('db', 'big'));
  const n = 2000;
  z.setSlice(slice('db', 'big-1', 'big', Array.from({ length: n }, (_, i) => ep(`10.7.${i >> 8}.${i & 255}`)), [port('pg', 5432)]));
  const pieces = [...dumpJson(z, OPTS)];
  // the pieces that belong to the service: from its head to its closing
  const start = pieces.findIndex((p) => p.includes('"name":"big"'));
  const end = pieces.findIndex((p, i) => i >= start && p.endsWith(']}'));
  assert.ok(end - start >= 2 * Math.ceil(n / 256), `${end - start + 1} pieces for ${n} endpoints: no pause inside the service`);
  // (a piece may hold one question's answers at the service's own name: A, SRV, each named port's SRV)
  const whole = pieces.slice(start, end + 1).join('').length;
  assert.ok(Math.max(...pieces.map((p) => p.length)) < whole / 3, 'no piece holds a third of the service');
  // nor is one step of the listing one answer of the service's own name (its 2,000 A records)
  const largest = Math.max(...[...serviceRecordBatches(z, z.getService('db', 'big')!, OPTS)].map((b) => b.length));
  assert.ok(largest <= 512, `the largest step lists ${largest} records`);
  const d = JSON.parse(pieces.join('')) as ZoneDump;
  const records = d.services.find((s) => s.name === 'big')!.records;
  assert.equal(records.filter((r) => r.type === 'A' && r.name === `big.db.svc.${ZN}`).length, n);
  assert.equal(records.filter((r) => r.type === 'A' && r.name !== `big.db.svc.${ZN}`).length, n, 'every endpoint name');
  assert.equal(records.filter((r) => r.type === 'PTR').length, n);
});
