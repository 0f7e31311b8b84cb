// The parts of zone transfer: who is allowed, the serial, the AXFR content, NOTIFY acknowledgements.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { Buffer } from 'node:buffer';
import * as dnsPacket from 'dns-packet';
import type { Answer } from 'dns-packet';
import { Registry } from 'prom-client';
import { createLogger, silentLogger } from '@kube-dns/config';
import { allowed, parseTransferTo } from '../src/transfer/acl.js';
import { SerialClock } from '../src/transfer/serial.js';
import { Notifier } from '../src/transfer/notify.js';
import { soa } from '../src/resolve/answers.js';
import { clusterZoneRecords, clusterZoneRecordsByService, externalZoneRecords } from '../src/transfer/records.js';
import { externalZones } from '../src/zones/external.js';
import { resolve } from '../src/resolve/resolve.js';
import { ZoneTransfer } from '../src/transfer/transfer.js';
import { isFramed } from '../src/transfer/messages.js';
import { parseQuery } from '../src/server/wire.js';
import { Zone } from '../src/records/zone.js';
import { serviceFromKube, sliceFromKube } from '../src/records/from-kube.js';
import { TransferEncoder } from '../src/transfer/messages.js';
import type { ResolveOptions } from '../src/resolve/types.js';
import { parseOptions } from '../src/options.js';
import { clusterIP, ep, externalName, headless, lines, port, slice } from './resolve-fixtures.js';

test('ACL: CIDRs and single IPs allow, IPv4-mapped IPv6 counts as IPv4, only IP entries are notified', () => {
  const acl = parseTransferTo('10.0.0.0/8, 192.0.2.53:5353, [2001:db8::53], fd00::/64');
  assert.equal(allowed(acl, '10.1.2.3'), true);
  assert.equal(allowed(acl, '::ffff:10.1.2.3'), true);
  assert.equal(allowed(acl, '192.0.2.53'), true);
  assert.equal(allowed(acl, '192.0.2.54'), false);
  assert.equal(allowed(acl, '2001:db8::53'), true);
  assert.equal(allowed(acl, 'fd00::9'), true);
  assert.equal(allowed(acl, '127.0.0.1'), false);
  assert.equal(allowed(acl, undefined), false);
  assert.deepEqual(acl.notify.map((n) => `${n.host}:${n.port}`), ['192.0.2.53:5353', '2001:db8::53:53']);
  // separators alone name nobody: an error, not transfers on for no one
  for (const raw of [',', ' , ,']) assert.throws(() => parseTransferTo(raw), /names no CIDR or IP\[:port\]/, raw);
  assert.throws(() => parseOptions(['--transfer-to=,']), /--transfer-to=,: "," names no CIDR/);
});

test('serial: unchanged without a change; a change moves it to the clock, at most once a second; it never runs ahead of the clock', () => {
  const zone = { generation: 1, depGeneration: () => 0 };
  let now = 1_800_000_000_000;
  let mono = 0;
  const s = new SerialClock(zone, () => now, () => mono);
  assert.equal(s.current(), 1_800_000_000);
  assert.equal(s.current(), 1_800_000_000);
  now += 1000;
  mono += 1000;
  zone.generation = 2;
  assert.equal(s.current(), 1_800_000_001, 'a change a second later: the clock');
  // a burst of changes within the second waits for the next serial
  now += 300;
  mono += 300;
  zone.generation = 3;
  assert.equal(s.current(), 1_800_000_001, 'within the interval: the serial waits');
  now += 700;
  mono += 700;
  assert.equal(s.current(), 1_800_000_002, 'then moves, with no other change needed');
  // a thousand changes over ten seconds: the serial is the clock, not the count of changes
  for (let i = 0; i < 1000; i++) {
    now += 10;
    mono += 10;
    zone.generation++;
    s.current();
  }
  assert.ok(s.current() <= Math.floor(now / 1000), `${s.current()} is not ahead of the clock ${Math.floor(now / 1000)}`);
  // so a restart (a new clock, from the time) does not go back
  const restarted = new SerialClock(zone, () => now + 5000, () => 0);
  assert.ok(restarted.current() > s.current());
  // a slower pace (transfers are expensive: transfer.ts): one serial per interval
  s.minIntervalMs = 10_000;
  const before = s.current();
  zone.generation++;
  mono += 5000;
  now += 5000;
  assert.equal(s.current(), before, 'within the slower pace: the change waits');
  mono += 5000;
  now += 5000;
  assert.equal(s.current(), Math.floor(now / 1000), 'then the clock');
});

test('AXFR content: SOA first and last, ExternalName CNAME, no pod names, nothing twice', () => {
  const zone = new Zone();
  zone.setService({ namespace: 'ns', name: 'a', kind: 'ClusterIP', clusterIPs: ['10.0.0.1'], externalName: '', ports: [{ name: 'h', port: 80, protocol: 'TCP' }], publishNotReadyAddresses: false });
  zone.setService({ namespace: 'ns', name: 'x', kind: 'ExternalName', clusterIPs: [], externalName: 'example.org', ports: [], publishNotReadyAddresses: false });
  const opts: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'insecure', serial: 7 };
  const rrs = clusterZoneRecords(zone, opts).map((r) => `${r.name} ${r.type} ${typeof (r as { data: unknown }).data === 'object' ? JSON.stringify((r as { data: { port?: number } }).data.port ?? '') : String((r as { data: unknown }).data)}`);
  assert.equal(rrs[0]!.split(' ')[1], 'SOA');
  assert.equal(rrs.at(-1)!.split(' ')[1], 'SOA');
  for (const want of ['a.ns.svc.cluster.local A 10.0.0.1', '_h._tcp.a.ns.svc.cluster.local SRV 80', 'x.ns.svc.cluster.local CNAME example.org']) assert.ok(rrs.includes(want), `${want} in ${rrs.join('\n')}`);
  assert.equal(new Set(rrs).size, rrs.length - 1, 'only the SOA twice');
  assert.ok(!rrs.some((r) => r.includes('.pod.')));
});

test('AXFR of a headless Service of thousands of endpoints: in pieces of a few hundred records, each name holding what a query for it answers (SRV deduplicated and weighted over the whole name)', () => {
  const zone = new Zone();
  zone.setService(headless('db', 'big'));
  const tcpUdp = [port('pg', 5432), port('pg-udp', 5432, 'UDP'), port('', 9187)];
  const v4 = Array.from({ length: 6000 }, (_, k) => ep(`10.2.${k >> 8}.${k & 255}`, k % 3 === 0 ? `pg-${k}` : k % 3 === 1 ? '' : 'shared', k % 50 !== 7));
  zone.setSlice(slice('db', 'big-a', 'big', v4, tcpUdp));
  // the same addresses again with one more port (a mirrored slice: merged), and IPv6 ones without ports
  zone.setSlice(slice('db', 'big-b', 'big', v4.slice(0, 100), [port('metrics', 9090)]));
  zone.setSlice(slice('db', 'big-c', 'big', Array.from({ length: 300 }, (_, k) => ep(`fd00::${k.toString(16)}`, k % 2 ? 'shared' : '')), []));
  const opts: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'disabled', serial: 7 };

  const pieces = [...clusterZoneRecordsByService(zone, opts)];
  const largest = Math.max(...pieces.map((p) => p.length));
  assert.ok(largest <= 512, `no step of the build gives more than a few hundred records (the largest: ${largest}); one answer of the Service's own name was one step of 6,000`);

  const byName = new Map<string, string[]>();
  for (const r of pieces.flat().slice(1, -1)) {
    const key = `${r.name} ${r.type}`;
    byName.set(key, [...(byName.get(key) ?? []), ...lines([r])]);
  }
  const fqdn = 'big.db.svc.cluster.local';
  const owners = [`${fqdn} A`, `${fqdn} AAAA`, `${fqdn} SRV`, `_pg._tcp.${fqdn} SRV`, `_pg-udp._udp.${fqdn} SRV`, `_metrics._tcp.${fqdn} SRV`, `shared.${fqdn} A`, `shared.${fqdn} AAAA`, `pg-3.${fqdn} A`, `10-2-0-1.${fqdn} A`];
  for (const key of owners) {
    const [name, type] = key.split(' ') as [string, string];
    const answered = lines(resolve(zone, name, type, opts).answers).sort();
    assert.ok(answered.length > 0, `${key} answers something`);
    assert.deepEqual((byName.get(key) ?? []).sort(), answered, `${key}: the transfer holds what a query answers`);
  }
  // every owner and type in the transfer is one a query answers the same way
  for (const [key, rrs] of byName) {
    const [name, type] = key.split(' ') as [string, string];
    assert.deepEqual(rrs.sort(), lines(resolve(zone, name, type, opts).answers.filter((a) => a.type === type)).sort(), key);
  }
});

test('NOTIFY: acknowledged only by an answer from the secondary; a REFUSED one is a failure, not retried', async (t) => {
  // a secondary that answers with `rcode`, from its own socket or from another one
  const secondary = async (rcode: number, fromElsewhere = false) => {
    const s = createSocket('udp4');
    const other = createSocket('udp4');
    let got = 0;
    s.on('message', (msg, r) => {
      got++;
      const reply = Buffer.from(msg.subarray(0, 12));
      reply[2] = reply[2]! | 0x80;
      reply[3] = rcode;
      reply.writeUInt16BE(0, 4); // no question echoed: enough for the notifier
      (fromElsewhere ? other : s).send(reply, r.port, r.address);
    });
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    await new Promise<void>((r) => other.bind(0, '127.0.0.1', () => r()));
    t.after(() => {
      s.close();
      other.close();
    });
    return { port: s.address().port, got: () => got };
  };
  const refusing = await secondary(5);
  const spoofed = await secondary(0, true);
  const good = await secondary(0);
  const n = new Notifier(silentLogger());
  t.after(() => n.stop());
  const record = soa('cluster.local', { zone: 'cluster.local', ttl: 30, pods: 'insecure', serial: 1 });
  for (const s of [refusing, spoofed, good]) n.notify({ host: '127.0.0.1', port: s.port, family: 4, raw: '' }, 'cluster.local', record);
  await new Promise((r) => setTimeout(r, 1500)); // past one retry
  assert.equal(n.stats.acknowledged, 1, 'only the good secondary');
  assert.equal(n.stats.failed, 1, 'the refusing one, at once');
  assert.equal(refusing.got(), 1, 'a refusal is not retried');
  assert.ok(spoofed.got() >= 2, 'an answer from elsewhere does not count: retried');
});

test('NOTIFY leaves from the address we serve on (--dns-bind-address), so a secondary takes it from its primary; from the wildcard, from wherever the kernel routes', async (t) => {
  // BIND refuses a NOTIFY from an address that is not one of its primaries ("refused notify from non-primary")
  const secondary = createSocket('udp4');
  const from: string[] = [];
  secondary.on('message', (msg, r) => {
    from.push(r.address);
    const reply = Buffer.from(msg.subarray(0, 12));
    reply[2] = reply[2]! | 0x80;
    reply.writeUInt16BE(0, 4);
    secondary.send(reply, r.port, r.address);
  });
  await new Promise<void>((r) => secondary.bind(0, '127.0.0.1', () => r()));
  t.after(() => secondary.close());
  const record = soa('cluster.local', { zone: 'cluster.local', ttl: 30, pods: 'insecure', serial: 1 });
  for (const source of ['127.0.0.2', '0.0.0.0']) {
    const n = new Notifier(silentLogger(), source);
    t.after(() => n.stop());
    n.notify({ host: '127.0.0.1', port: secondary.address().port, family: 4, raw: '' }, 'cluster.local', record);
    for (let i = 0; i < 100 && n.stats.acknowledged < 1; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(n.stats.acknowledged, 1, source);
  }
  assert.deepEqual(from, ['127.0.0.2', '127.0.0.1']);

  // an address the pod no longer has: the bind fails, and no NOTIFY leaves from another address
  // (dgram would have sent the retries unbound, from the kernel's choice, which a secondary refuses)
  from.length = 0;
  const gone = new Notifier(silentLogger(), '192.0.2.77');
  t.after(() => gone.stop());
  gone.notify({ host: '127.0.0.1', port: secondary.address().port, family: 4, raw: '' }, 'cluster.local', record);
  await new Promise((r) => setTimeout(r, 2500)); // its retries, 1 s apart
  assert.deepEqual(from, []);
});

test('AXFR of an external zone leaves out the names of a stub domain inside it too', () => {
  const zone = new Zone();
  const ext = (ns: string, ip: string) => zone.setService({ namespace: ns, name: 'web', kind: 'ClusterIP', clusterIPs: ['10.0.0.7'], externalName: '', ports: [], publishNotReadyAddresses: false, external: { ips: [ip], hostname: '' } });
  ext('team', '198.51.100.7');
  ext('shop', '198.51.100.8');
  const base: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'insecure', serial: 7 };
  const [ez] = externalZones(['ext.example'], undefined, base);
  // the ConfigMap is read after the zones are built: the predicate is read through
  base.forwardedInZone = (n) => n === 'team.ext.example' || n.endsWith('.team.ext.example');
  const names = externalZoneRecords(zone, ez!).map((r) => `${r.name} ${r.type}`);
  assert.ok(names.includes('web.shop.ext.example A'), names.join('\n'));
  assert.ok(!names.some((n) => n.includes('team')), names.join('\n'));
});

test('AXFR of the cluster zone leaves out the names of a stub domain inside it (forwarded, never answered from the records)', () => {
  const zone = new Zone();
  zone.setService({ namespace: 'legacy', name: 'db', kind: 'ClusterIP', clusterIPs: ['10.0.0.50'], externalName: '', ports: [{ name: 'pg', port: 5432, protocol: 'TCP' }], publishNotReadyAddresses: false });
  zone.setService({ namespace: 'ns', name: 'a', kind: 'ClusterIP', clusterIPs: ['10.0.0.1'], externalName: '', ports: [], publishNotReadyAddresses: false });
  const stub = 'legacy.svc.cluster.local';
  const opts: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'insecure', serial: 7, forwardedInZone: (n) => n === stub || n.endsWith(`.${stub}`) };
  const names = clusterZoneRecords(zone, opts).map((r) => `${r.name} ${r.type}`);
  assert.ok(names.includes('a.ns.svc.cluster.local A'), names.join('\n'));
  assert.ok(!names.some((n) => n.includes('legacy')), names.join('\n'));
  assert.equal(names.filter((n) => n.endsWith(' SOA')).length, 2, 'SOA first and last');
});

test('serial: a pod change (in no transfer) leaves it; a Service change moves it', () => {
  const zone = new Zone();
  let now = 1_800_000_000_000;
  let mono = 0;
  const s = new SerialClock(zone, () => now, () => mono);
  const first = s.current();
  zone.setPod({ namespace: 'default', name: 'web-1', ips: ['10.244.0.7'], finished: false });
  now += 2000;
  mono += 2000;
  assert.equal(s.current(), first, 'pod churn does not send every secondary the same zone again');
  zone.setService(clusterIP('default', 'web', ['10.0.0.9']));
  assert.equal(s.current(), first + 2, 'a Service: the clock');
});

/** The records of a framed transfer (every message's answers, in order), and the messages' IDs. */
function unframe(framed: Buffer): { rrs: Answer[]; ids: Set<number> } {
  const rrs: Answer[] = [];
  const ids = new Set<number>();
  for (let off = 0; off < framed.length; ) {
    const len = framed.readUInt16BE(off);
    const msg = dnsPacket.decode(framed.subarray(off + 2, off + 2 + len));
    ids.add(msg.id!);
    rrs.push(...(msg.answers ?? []));
    off += 2 + len;
  }
  return { rrs, ids };
}

test('a transfer is built a slice at a time, once per serial; a Service added or re-created during a build waits for the next serial, and each transfer carries one serial at both ends', async (t) => {
  const zone = new Zone();
  zone.setService(clusterIP('aaa', 'web', ['10.0.0.1'])); // first in the walk, alone in its namespace
  for (let i = 0; i < 3000; i++) zone.setService(clusterIP(`ns${i % 20}`, `svc-${i}`, [`10.96.${i >> 8}.${i & 255}`]));
  let now = 1_800_000_000_000;
  let mono = 0;
  const clock = new SerialClock(zone, () => now, () => mono);
  const opts = { zone: 'cluster.local', ttl: 30, pods: 'insecure' } as ResolveOptions;
  Object.defineProperty(opts, 'serial', { get: () => clock.current(), enumerable: true });
  const builds: string[] = [];
  const log = createLogger('test', 2, 'info', (line) => void (line.includes('zone transfer built') && builds.push(line)));
  const xfr = new ZoneTransfer({ zone, cluster: opts, external: [], log, registry: new Registry(), serialClock: clock });
  t.after(() => xfr.stop());
  xfr.setAcl(parseTransferTo('127.0.0.1'));
  const ask = (id: number, zoneName = 'cluster.local'): Buffer | Promise<Buffer> => {
    const query = Buffer.from(dnsPacket.encode({ type: 'query', id, questions: [{ name: zoneName, type: 'AXFR', class: 'IN' }] }));
    const q = parseQuery(query);
    assert.ok(q.ok);
    return xfr.answer(query, q, 'tcp', '127.0.0.1');
  };
  const first = clock.current();
  let turns = 0;
  const counting = setInterval(() => turns++, 0);
  t.after(() => clearInterval(counting));
  const a = ask(1);
  const b = ask(2); // the same serial: the same build
  assert.ok(a instanceof Promise && b instanceof Promise, 'being built: a promise');
  await new Promise((r) => setImmediate(r));
  // changes while it is being built, a second later: the next question has a new serial. web is
  // past (the build's first slice), deleted and re-created as another kind: a live walk of the
  // zone's maps met it again at their end, and the transfer had it twice, as an A and a CNAME
  zone.setService(clusterIP('late', 'arrival', ['10.0.9.9']));
  zone.deleteService('aaa', 'web');
  zone.setService(externalName('aaa', 'web', 'example.com'));
  now += 1000;
  mono += 1000;
  const c = ask(3);
  const [ra, rb, rc] = await Promise.all([a, b, c]);
  clearInterval(counting);
  assert.ok(turns >= 2, `the event loop turned ${turns} times during the builds`);
  assert.equal(builds.length, 2, `one build per serial:\n${builds.join('\n')}`);
  const [ua, ub, uc] = [unframe(ra), unframe(rb), unframe(rc)];
  assert.deepEqual([...ua.ids], [1]);
  assert.deepEqual([...ub.ids], [2]);
  assert.deepEqual(ub.rrs, ua.rrs, 'both askers of one serial get one zone');
  const serialOf = (r: Answer | undefined): number => (r as { data: { serial: number } }).data.serial;
  assert.equal(serialOf(ua.rrs[0]), first);
  assert.equal(serialOf(ua.rrs.at(-1)), first, 'the same serial at both ends, though it moved during the build');
  assert.equal(serialOf(uc.rrs[0]), first + 1);
  assert.equal(serialOf(uc.rrs.at(-1)), first + 1);
  const owned = (rrs: Answer[], name: string): string[] => rrs.filter((r) => r.name === name).map((r) => r.type);
  assert.deepEqual(owned(ua.rrs, 'web.aaa.svc.cluster.local'), ['A'], 'web once, as it was when the build began');
  assert.deepEqual(owned(ua.rrs, 'arrival.late.svc.cluster.local'), [], 'a Service added during the build waits for the next serial');
  assert.deepEqual(owned(uc.rrs, 'web.aaa.svc.cluster.local'), ['CNAME'], 'the next serial has web as it is now');
  assert.deepEqual(owned(uc.rrs, 'arrival.late.svc.cluster.local'), ['A']);
  assert.equal(uc.rrs.length, 4 + 3002, 'SOA ×2, NS, TXT and one record per Service (no ports: no SRV)');
  // asked again at that serial: kept, no build
  const again = ask(4);
  assert.ok(Buffer.isBuffer(again));
  assert.deepEqual(unframe(again).rrs, uc.rrs);
  assert.equal(builds.length, 2);
  // in another case: the same transfer (one kept per zone, not per spelling), the asker's question echoed
  const shouted = ask(5, 'CLUSTER.Local');
  assert.ok(Buffer.isBuffer(shouted), 'no build for another spelling');
  const first2 = shouted.readUInt16BE(0);
  assert.equal(dnsPacket.decode(shouted.subarray(2, 2 + first2)).questions?.[0]?.name, 'CLUSTER.Local');
  assert.deepEqual(unframe(shouted).rrs, uc.rrs);
  assert.equal(builds.length, 2);
});

test('serial: endpoint churn of a ClusterIP Service leaves it; a headless Service\'s endpoints, or a ClusterIP Service losing its last ready endpoint, move it', () => {
  const zone = new Zone();
  zone.setService(clusterIP('default', 'web', ['10.0.0.9']));
  zone.setService(headless('default', 'db'));
  zone.setSlice(slice('default', 'web-a', 'web', [ep('10.244.0.1')]));
  let now = 1_800_000_000_000;
  let mono = 0;
  const s = new SerialClock(zone, () => now, () => mono);
  const first = s.current();
  const later = (): number => {
    now += 2000;
    mono += 2000;
    return s.current();
  };
  // a rolling update of web: pods come and go behind its cluster IP, which is all a transfer holds
  zone.setSlice(slice('default', 'web-a', 'web', [ep('10.244.0.1'), ep('10.244.0.2', '', false)]));
  zone.setSlice(slice('default', 'web-a', 'web', [ep('10.244.0.2')]));
  zone.setSlice(slice('default', 'web-b', 'web', [ep('10.244.0.3')]));
  zone.deleteSlice('default', 'web-b');
  assert.equal(later(), first, 'the ClusterIP Service\'s transfer records did not change');
  // its last ready endpoint gone: with --ignore-empty-service it leaves the transfer
  zone.setSlice(slice('default', 'web-a', 'web', [ep('10.244.0.2', '', false)]));
  const emptied = later();
  assert.equal(emptied, first + 4, 'no ready endpoint left: a new serial');
  zone.setSlice(slice('default', 'web-a', 'web', [ep('10.244.0.4')]));
  const back = later();
  assert.equal(back, emptied + 2, 'ready again: a new serial');
  // a headless Service's endpoints are its records
  zone.setSlice(slice('default', 'db-a', 'db', [ep('10.244.1.1', 'db-0')]));
  assert.equal(later(), back + 2, 'a headless endpoint: a new serial');
  zone.deleteSlice('default', 'db-a');
  assert.equal(later(), back + 4, 'and its removal');
  // a slice whose Service does not exist (yet) is in no transfer
  zone.setSlice(slice('default', 'early-a', 'early', [ep('10.244.2.1')]));
  assert.equal(later(), back + 4, 'a slice before its Service');
  zone.setService(clusterIP('default', 'early', ['10.0.0.10']));
  assert.equal(later(), back + 8, 'then the Service: a new serial');
});

test('transfers turned off (or the asker no longer allowed) while a transfer is being built: REFUSED, not the zone', async (t) => {
  const zone = new Zone();
  for (let i = 0; i < 3000; i++) zone.setService(clusterIP(`ns${i % 20}`, `svc-${i}`, [`10.96.${i >> 8}.${i & 255}`]));
  const opts: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'insecure', serial: 7 };
  const transfer = (): ZoneTransfer => {
    const x = new ZoneTransfer({ zone, cluster: opts, external: [], log: silentLogger(), registry: new Registry() });
    t.after(() => x.stop());
    x.setAcl(parseTransferTo('127.0.0.1, 127.0.0.2'));
    return x;
  };
  const ask = (xfr: ZoneTransfer, from: string): Buffer | Promise<Buffer> => {
    const query = Buffer.from(dnsPacket.encode({ type: 'query', id: 9, questions: [{ name: 'cluster.local', type: 'AXFR', class: 'IN' }] }));
    const q = parseQuery(query);
    assert.ok(q.ok);
    return xfr.answer(query, q, 'tcp', from);
  };
  const rcode = async (p: Buffer | Promise<Buffer>): Promise<number> => {
    assert.ok(p instanceof Promise, 'being built');
    const b = await p;
    return isFramed(b) ? 0 : b[3]! & 0xf;
  };
  const narrowed = transfer();
  const fromTwo = ask(narrowed, '127.0.0.2');
  const fromOne = ask(narrowed, '127.0.0.1');
  narrowed.setAcl(parseTransferTo('127.0.0.1')); // 127.0.0.2 is no longer listed
  assert.equal(await rcode(fromTwo), 5, 'no longer allowed: REFUSED');
  assert.equal(await rcode(fromOne), 0, 'still allowed: the zone');
  const off = transfer();
  const asked = ask(off, '127.0.0.1');
  off.setAcl(undefined); // transferTo: "" in the ConfigMap
  assert.equal(await rcode(asked), 5, 'transfers off: REFUSED');
});

test("an EndpointSlice port named with 63 characters (a valid slice port name) gets no SRV name, and the transfer stays readable", () => {
  // `_<63 characters>` is a 64-octet label: it broke every message of the zone's transfer
  const zone = new Zone();
  zone.setService(serviceFromKube({ metadata: { namespace: 'ns', name: 'db' }, spec: { clusterIP: 'None', ports: [{ name: 'pg', port: 5432 }] } })!);
  const long = 'p'.repeat(63);
  zone.setSlice(
    sliceFromKube({
      metadata: { namespace: 'ns', name: 'db-manual', labels: { 'kubernetes.io/service-name': 'db' } },
      addressType: 'IPv4',
      ports: [
        { name: long, port: 5432, protocol: 'TCP' },
        { name: 'p'.repeat(62), port: 9187, protocol: 'TCP' },
      ],
      endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true } }],
    })!,
  );
  const opts: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'disabled', serial: 7 };
  const recs = clusterZoneRecords(zone, opts);
  const enc = new TransferEncoder(1, 'cluster.local');
  enc.add(recs);
  const framed = enc.finish();
  const names = dnsPacket.decode(framed.subarray(2, 2 + framed.readUInt16BE(0))).answers!.map((a) => `${a.name} ${a.type}`);
  assert.ok(names.includes(`_${'p'.repeat(62)}._tcp.db.ns.svc.cluster.local SRV`), 'a 62-character name still has its SRV name');
  assert.ok(!names.some((n) => n.startsWith(`_${long}.`)));
  assert.ok(names.includes('db.ns.svc.cluster.local A'));
});
