// What reaches the wire from the real resolver and encoder: metric cardinality, names echoed as
// bytes, replies within limits. Real UDP/TCP sockets, real zone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildQuery, datas, exchange, query } from '@kube-dns/dns-client';
import * as dnsPacket from 'dns-packet';
import { Zone } from '../src/records/zone.js';
import { AbsentNames } from '../src/resolve/absent.js';
import { encodeNegative } from '../src/server/encode.js';
import { parseQuery } from '../src/server/wire.js';
import { OPTS, clusterIP, ep, headless, port, slice } from './resolve-fixtures.js';
import { startStack } from './server-stack.js';
import { labelsOf, rawQuery, readName, sameLabels, walkReply } from './wire-check.js';

test('qtypes a client makes up are counted under one "other" label, not one series each', async (t) => {
  const s = await startStack();
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'web', ['10.0.0.5'], [port('http', 80)]));
  const base = buildQuery({ name: 'web.default.svc.cluster.local', type: 'A' });
  for (let qtype = 1000; qtype < 1300; qtype++) {
    const q = Buffer.from(base);
    q.writeUInt16BE(qtype, q.length - 4);
    const r = await exchange(s.server, q, 'udp', 2000);
    assert.equal(r.readUInt16BE(0), q.readUInt16BE(0));
  }
  await exchange(s.server, base, 'udp', 2000);
  const text = await s.metrics.registry.metrics();
  const series = text.split('\n').filter((l) => l.startsWith('kubedns_dns_requests_total{'));
  assert.deepEqual(
    series.sort(),
    ['kubedns_dns_requests_total{qtype="A",rcode="NOERROR",transport="udp"} 1', 'kubedns_dns_requests_total{qtype="other",rcode="NOERROR",transport="udp"} 300'],
  );
});

test('a BADVERS answer (EDNS version 1) is counted as BADVERS, not as the NOERROR its header holds', async (t) => {
  const s = await startStack();
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'web', ['10.0.0.5'], [port('http', 80)]));
  const v1 = buildQuery({ name: 'web.default.svc.cluster.local', type: 'A', ednsUdpSize: 1232 });
  v1.writeUInt8(1, v1.length - 11 + 6); // the OPT record's TTL, byte 2: the EDNS version
  const r = await exchange(s.server, v1, 'udp', 2000);
  assert.equal(r.readUInt16BE(2) & 0xf, 0, 'the low 4 bits of 16 in the header');
  const series = (await s.metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('kubedns_dns_requests_total{'));
  assert.deepEqual(series, ['kubedns_dns_requests_total{qtype="A",rcode="BADVERS",transport="udp"} 1']);
});

test('names are echoed as bytes: 0x20 case, non-ASCII octets and a 63-octet label of 0xFF come back exactly', async (t) => {
  const s = await startStack();
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'web', ['10.0.0.5'], [port('http', 80)]));
  const ff63 = Buffer.alloc(63, 0xff);
  const cases: Buffer[][] = [
    labelsOf('WeB.DeFaUlT.sVc.ClUsTeR.LoCaL'),
    [Buffer.from('1-2-3-4'), Buffer.from([0xff, 0xfe]), ...labelsOf('pod.cluster.local')],
    [Buffer.from('1-2-3-4'), ff63, ...labelsOf('pod.cluster.local')],
    // two namespaces differing only in non-ASCII "case" (0xC0 vs 0xE0) are different names
    [Buffer.from('10-0-0-1'), Buffer.from([0xc0]), ...labelsOf('pod.cluster.local')],
    [Buffer.from('10-0-0-1'), Buffer.from([0xe0]), ...labelsOf('pod.cluster.local')],
    [Buffer.from('nosuch'), Buffer.from([0xc3, 0xbf]), ...labelsOf('svc.cluster.local')],
  ];
  for (const labels of cases) {
    // twice: the second reply comes from the response cache
    for (const transport of ['udp', 'tcp', 'udp'] as const) {
      const id = Math.floor(Math.random() * 65535);
      const reply = await exchange(s.server, rawQuery(id, labels, 1, 1232), transport, 2000);
      const w = walkReply(reply);
      const shown = labels.map((l) => l.toString('hex')).join('.');
      assert.equal(w.id, id);
      assert.ok(sameLabels(w.question, labels), `question echoed exactly for ${shown}`);
      for (const r of w.records) {
        if (r.section === 'answer') assert.ok(sameLabels(r.owner, labels), `answer owner is the question's bytes for ${shown}`);
      }
      if (shown.startsWith(Buffer.from('1-2-3-4').toString('hex')) || shown.startsWith(Buffer.from('10-0-0-1').toString('hex'))) {
        assert.equal(w.records.filter((r) => r.section === 'answer').length, 1, `an A record for ${shown}`);
      }
    }
  }
});

/** A zone that counts the services wildcard walks look at. */
class CountingZone extends Zone {
  visited = 0;
  /** Endpoints of headless services read while answering (each turns into a record). */
  endpointsRead = 0;
  override headless(e: Parameters<Zone['headless']>[0], zone: string) {
    const view = super.headless(e, zone);
    const count = <T extends object>(list: T[]): T[] =>
      new Proxy(list, { get: (l, k, r) => (typeof k === 'string' && /^\d+$/.test(k) && this.endpointsRead++, Reflect.get(l, k, r)) });
    return { ...view, endpoints: count(view.endpoints), byLabel: new Map([...view.byLabel].map(([k, v]) => [k, count(v)])) };
  }
  override *allServices() {
    for (const e of super.allServices()) {
      this.visited++;
      yield e;
    }
  }
  override *servicesIn(ns: string) {
    for (const e of super.servicesIn(ns)) {
      this.visited++;
      yield e;
    }
  }
  override *servicesNamed(name: string) {
    for (const e of super.servicesNamed(name)) {
      this.visited++;
      yield e;
    }
  }
}

function bigZone(zone: Zone, namespaces = 20, perNamespace = 100) {
  for (let n = 0; n < namespaces; n++) {
    for (let i = 0; i < perNamespace; i++) zone.setService(clusterIP(`ns${n}`, `s${i}`, [`10.${n}.${i >> 8}.${i & 255}`], [port('http', 80)]));
  }
}

test('wildcards are off by default: `*` is an ordinary label that no service has', async (t) => {
  const s = await startStack();
  t.after(s.stop);
  bigZone(s.zone, 2, 10);
  for (const name of ['*.ns0.svc.cluster.local', 's1.*.svc.cluster.local', '*.*.svc.cluster.local', '*.s1.ns0.svc.cluster.local']) {
    const r = await query(s.server, { name, type: 'A' });
    assert.equal(r.packet.rcode, 'NXDOMAIN', name);
    assert.equal(r.packet.answers?.length ?? 0, 0, name);
  }
  const srv = await query(s.server, { name: '*._tcp.s1.ns0.svc.cluster.local', type: 'SRV' });
  assert.equal(srv.packet.rcode, 'NXDOMAIN');
  const named = await query(s.server, { name: '_http._tcp.s1.ns0.svc.cluster.local', type: 'SRV' });
  assert.equal(named.packet.answers?.length, 1, 'named ports still answer');
});

test('with --wildcards, a wildcard is bounded in work and answers whatever the zone size', async (t) => {
  const zone = new CountingZone();
  const s = await startStack({ zone, resolve: { wildcards: true } });
  t.after(s.stop);
  // first of all (wildcards walk in order), a headless service of 5,000 endpoints: a wildcard
  // over it builds only the records it may still answer
  zone.setService(headless('ns0', 'many'));
  zone.setSlice(slice('ns0', 'many-1', 'many', Array.from({ length: 5000 }, (_, i) => ep(`10.99.${i >> 8}.${i & 255}`)), [port('http', 80)]));
  bigZone(zone); // and 2,000 services
  for (const [name, type, transport] of [
    ['*.*.svc.cluster.local', 'A', 'udp'],
    ['*.*.svc.cluster.local', 'A', 'tcp'],
    ['_http._tcp.*.*.svc.cluster.local', 'SRV', 'tcp'],
    ['*.ns3.svc.cluster.local', 'A', 'tcp'],
    ['*.ns0.svc.cluster.local', 'A', 'tcp'],
  ] as const) {
    zone.visited = 0;
    zone.endpointsRead = 0;
    const r = await query(s.server, { name, type, transport, ednsUdpSize: 1232 });
    assert.equal(r.packet.rcode, 'NOERROR', name);
    const n = r.packet.answers?.length ?? 0;
    assert.ok(n > 0 && n <= 64, `${n} answers for ${name} ${type} over ${transport}`);
    assert.ok(zone.visited <= 256, `${zone.visited} services visited for ${name}`);
    // an answer reads its endpoint (and one more is looked at before the walk stops); an SRV
    // answer reads its target's endpoint again for the additional address record
    assert.ok(zone.endpointsRead <= 2 * 65, `${zone.endpointsRead} endpoints read for ${name} ${type}`);
    if (transport === 'udp') assert.ok(r.bytes.length <= 1232);
  }
  const one = await query(s.server, { name: 's7.*.svc.cluster.local', type: 'A' });
  assert.equal(one.packet.answers?.length, 20, 'one per namespace');
});

test('with --wildcards, a wildcard over one namespace stays cached across changes elsewhere', async (t) => {
  const s = await startStack({ resolve: { wildcards: true } });
  t.after(s.stop);
  bigZone(s.zone, 3, 5);
  const ask = () => query(s.server, { name: '*.ns1.svc.cluster.local', type: 'A' });
  assert.equal((await ask()).packet.answers?.length, 5);
  const hits = s.handler.cache.hits;
  // churn in other namespaces
  for (let i = 0; i < 10; i++) s.zone.setService(clusterIP('ns2', `churn${i}`, [`10.2.9.${i}`]));
  s.zone.deleteService('ns0', 's0');
  assert.equal((await ask()).packet.answers?.length, 5);
  assert.equal(s.handler.cache.hits, hits + 1, 'served from the cache');
  // a change in the namespace itself is seen at once
  s.zone.setService(clusterIP('ns1', 'new', ['10.1.9.9']));
  assert.equal((await ask()).packet.answers?.length, 6);
  assert.equal(s.handler.cache.hits, hits + 1, 'rebuilt, not served stale');
  // and `<svc>.*` follows services of its name only
  const byName = () => query(s.server, { name: 's3.*.svc.cluster.local', type: 'A' });
  assert.equal((await byName()).packet.answers?.length, 3);
  s.zone.setService(clusterIP('ns2', 'other', ['10.2.8.8']));
  const h2 = s.handler.cache.hits;
  assert.equal((await byName()).packet.answers?.length, 3);
  assert.equal(s.handler.cache.hits, h2 + 1);
  s.zone.setService(clusterIP('ns9', 's3', ['10.9.3.3']));
  assert.equal((await byName()).packet.answers?.length, 4);
});

test('a cached answer lasts exactly as long as its service: changed, sliced, deleted or re-created, it is asked again', async (t) => {
  const s = await startStack();
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'a', ['10.0.0.1'], [port('http', 80)]));
  s.zone.setService(clusterIP('default', 'b', ['10.0.0.2'], [port('http', 80)]));
  const ask = async (name: string) => {
    const hits = s.handler.cache.hits;
    const r = await query(s.server, { name: `${name}.default.svc.cluster.local`, type: 'A' });
    return { ips: datas(r.packet.answers), rcode: r.packet.rcode, hit: s.handler.cache.hits > hits };
  };
  assert.deepEqual(await ask('a'), { ips: ['10.0.0.1'], rcode: 'NOERROR', hit: false });
  assert.deepEqual(await ask('a'), { ips: ['10.0.0.1'], rcode: 'NOERROR', hit: true });
  assert.deepEqual(await ask('b'), { ips: ['10.0.0.2'], rcode: 'NOERROR', hit: false });

  s.zone.setService(clusterIP('default', 'a', ['10.0.0.9'], [port('http', 80)])); // changed
  assert.deepEqual(await ask('a'), { ips: ['10.0.0.9'], rcode: 'NOERROR', hit: false });
  assert.deepEqual(await ask('b'), { ips: ['10.0.0.2'], rcode: 'NOERROR', hit: true }, 'another service keeps its entry');

  s.zone.setService(clusterIP('default', 'a', ['10.0.0.9'], [port('http', 80)])); // the same object again (a resync)
  assert.equal((await ask('a')).hit, true, 'an unchanged service keeps its entry');

  s.zone.setSlice(slice('default', 'a-1', 'a', [ep('10.1.0.1')])); // its slices changed
  assert.equal((await ask('a')).hit, false);

  s.zone.deleteService('default', 'a');
  assert.deepEqual(await ask('a'), { ips: [], rcode: 'NXDOMAIN', hit: false });
  s.zone.setService(clusterIP('default', 'a', ['10.0.0.1'], [port('http', 80)])); // back, with its first address
  assert.deepEqual(await ask('a'), { ips: ['10.0.0.1'], rcode: 'NOERROR', hit: false });
  assert.deepEqual(await ask('a'), { ips: ['10.0.0.1'], rcode: 'NOERROR', hit: true });
  assert.deepEqual(await ask('b'), { ips: ['10.0.0.2'], rcode: 'NOERROR', hit: true });
});

test("a reply cut to fit a small EDNS size (SRV targets' addresses left out) is never served to a client that takes more", async (t) => {
  // six SRV records fit 512 octets, their six A records in the additional section do not all:
  // the small reply leaves some out without TC, which a client with room for them must not get
  const s = await startStack();
  t.after(s.stop);
  s.zone.setService(headless('default', 'big'));
  s.zone.setSlice(slice('default', 'big-1', 'big', Array.from({ length: 6 }, (_, i) => ep(`10.9.0.${i + 1}`, `host-${i}`)), [port('http', 8080)]));
  const ask = async (ednsUdpSize: number) => {
    const hits = s.handler.cache.hits;
    const r = await query(s.server, { name: 'big.default.svc.cluster.local', type: 'SRV', ednsUdpSize });
    const additional = (r.packet.additionals ?? []).filter((a) => a.type === 'A').length;
    return { srv: r.packet.answers?.length, additional, tc: r.packet.flag_tc ?? false, fits: r.bytes.length <= Math.min(ednsUdpSize, 1232), hit: s.handler.cache.hits > hits };
  };
  const whole = { srv: 6, additional: 6, tc: false, fits: true };
  const small = await ask(512);
  assert.equal(small.srv, 6);
  assert.ok(small.additional < 6 && small.fits && !small.tc, JSON.stringify(small));
  assert.deepEqual(await ask(512), { ...small, hit: true }, 'the same size: the same reply, from the cache');
  assert.deepEqual(await ask(1232), { ...whole, hit: false }, 'more room: every address, not the small reply');
  assert.deepEqual(await ask(1232), { ...whole, hit: true });
  assert.deepEqual(await ask(4096), { ...whole, hit: true }, 'a whole reply serves any client it fits');
  assert.deepEqual(await ask(512), { ...small, hit: false }, 'and the small one is built again for its size');
});

test('an AAAA a service has not (NODATA) comes from the response cache, and lasts exactly as long as the service', async (t) => {
  // IPv4-only clusters: every lookup of a service by a pod's resolver asks its AAAA too
  const s = await startStack();
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'a', ['10.0.0.1'], [port('http', 80)]));
  const ask = async (labels: Buffer[]) => {
    const hits = s.handler.cache.hits;
    const reply = await exchange(s.server, rawQuery(21, labels, 28), 'udp', 2000);
    const packet = dnsPacket.decode(reply);
    const w = walkReply(reply);
    return {
      ips: datas(packet.answers),
      rcode: ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN'][reply[3]! & 0xf],
      hit: s.handler.cache.hits > hits,
      question: w.question.map((l) => l.toString('latin1')).join('.'),
      soa: packet.authorities?.[0]?.name,
    };
  };
  const a = labelsOf('a.default.svc.cluster.local');
  const nodata = { ips: [], rcode: 'NOERROR', question: 'a.default.svc.cluster.local', soa: 'cluster.local' };
  assert.deepEqual(await ask(a), { ...nodata, hit: false });
  assert.deepEqual(await ask(a), { ...nodata, hit: true });
  // another spelling hits the same entry: the question comes back as asked, the SOA as the zone spells it
  assert.deepEqual(await ask(labelsOf('A.Default.SVC.CLUSTER.LOCAL')), { ...nodata, question: 'A.Default.SVC.CLUSTER.LOCAL', hit: true });
  // the service gains an IPv6 address: the AAAA is answered, not the NODATA kept
  s.zone.setService(clusterIP('default', 'a', ['10.0.0.1', 'fd00::1'], [port('http', 80)]));
  assert.deepEqual(await ask(a), { ...nodata, ips: ['fd00::1'], soa: undefined, hit: false });
  s.zone.setService(clusterIP('default', 'a', ['10.0.0.1'], [port('http', 80)]));
  assert.deepEqual(await ask(a), { ...nodata, hit: false });
  assert.deepEqual(await ask(a), { ...nodata, hit: true });
  // gone: NXDOMAIN, and that is never kept (unique names would only churn the cache)
  s.zone.deleteService('default', 'a');
  assert.deepEqual(await ask(a), { ...nodata, rcode: 'NXDOMAIN', hit: false });
  assert.deepEqual(await ask(a), { ...nodata, rcode: 'NXDOMAIN', hit: false });
});

test('each query is counted under its system: reverse for PTR names under in-addr.arpa, auth for the rest of our zone', async (t) => {
  const s = await startStack();
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'web', ['10.0.0.5'], [port('http', 80)]));
  const count = async (system: string): Promise<number> => {
    const text = await s.metrics.registry.metrics();
    const m = new RegExp(`^skydns_skydns_dns_request_count_total\\{system="${system}"\\} (\\d+)`, 'm').exec(text);
    return m ? Number(m[1]) : 0;
  };
  await query(s.server, { name: '5.0.0.10.in-addr.arpa', type: 'PTR' });
  await query(s.server, { name: '9.9.9.10.IN-ADDR.ARPA', type: 'PTR' }); // no such address, capitals
  assert.equal(await count('reverse'), 2);
  assert.equal(await count('auth'), 0);
  await query(s.server, { name: 'web.default.svc.cluster.local', type: 'A' });
  await query(s.server, { name: 'nosuch.default.svc.cluster.local', type: 'A' });
  assert.equal(await count('auth'), 2);
  assert.equal(await count('reverse'), 2);
});

/** The SOA record of a negative reply: where it starts, its owner and names (pointers followed), and how its names are written. */
function negativeSoa(reply: Buffer) {
  const w = walkReply(reply);
  const rec = w.records.find((r) => r.section === 'authority');
  assert.ok(rec, 'an authority record');
  assert.equal(rec.type, 6, 'an SOA');
  // the owner starts after the question (four octets of type and class after its name)
  const start = readName(reply, 12).end + 4;
  const mname = readName(reply, rec.rdataOffset);
  const rname = readName(reply, mname.end);
  return {
    start,
    ownerIsPointer: (reply[start]! & 0xc0) === 0xc0,
    ownerTarget: ((reply[start]! & 0x3f) << 8) | reply[start + 1]!,
    owner: rec.owner.map((l) => l.toString('latin1')).join('.'),
    mname: mname.labels.map((l) => l.toString('latin1')).join('.'),
    rname: rname.labels.map((l) => l.toString('latin1')).join('.'),
    /** octets the record takes in the reply */
    size: rname.end + 20 - start,
  };
}

test('negative answers carry the zone SOA with its names compressed, and every client reads the same SOA', async (t) => {
  const zone = new Zone();
  zone.setService(clusterIP('default', 'web', ['10.0.0.5'], [port('http', 80)]));
  // the handler as the server runs it (common NXDOMAINs decided from the bytes), and one that always resolves
  const fast = await startStack({ zone, handler: { absent: new AbsentNames(OPTS, zone.presence) } });
  t.after(fast.stop);
  const full = await startStack({ zone });
  t.after(full.stop);
  const zoneSoa = (await query(full.server, { name: 'cluster.local', type: 'SOA' })).packet.answers?.[0];
  assert.equal(zoneSoa?.type, 'SOA');
  // written out, the SOA at cluster.local takes 15 + 10 + 22 + 26 + 20 = 93 octets; compressed, the
  // owner is a pointer and the two names end in one: 2 + 10 + (7 + 2) + (11 + 2) + 20 = 54
  const cases: { labels: Buffer[]; qtype: number; rcode: number; compressed: boolean }[] = [
    { labels: labelsOf('nosuch.default.svc.cluster.local'), qtype: 1, rcode: 3, compressed: true }, // a search-path expansion
    { labels: labelsOf('example.com.svc.cluster.local'), qtype: 28, rcode: 3, compressed: true },
    { labels: labelsOf('example.com.cluster.local'), qtype: 1, rcode: 3, compressed: true },
    // NODATA is kept in the response cache, whose hits write the asker's spelling of the question
    // over the one kept: its SOA's owner is written out, never borrowed from the question
    { labels: labelsOf('web.default.svc.cluster.local'), qtype: 28, rcode: 0, compressed: false }, // no AAAA
    { labels: labelsOf('cluster.local'), qtype: 28, rcode: 0, compressed: false }, // the zone itself
    // the client's spelling of the zone is not borrowed: the owner is written out
    { labels: labelsOf('NoSuch.default.svc.ClUsTeR.LoCaL'), qtype: 1, rcode: 3, compressed: false },
    { labels: labelsOf('web.default.svc.CLUSTER.local'), qtype: 28, rcode: 0, compressed: false },
  ];
  for (const c of cases) {
    const shown = c.labels.map((l) => l.toString('latin1')).join('.');
    for (const [server, path] of [[fast.server, 'from the bytes'], [full.server, 'resolved']] as const) {
      for (const edns of [undefined, 1232]) {
        for (const transport of ['udp', 'tcp'] as const) {
          const reply = await exchange(server, rawQuery(11, c.labels, c.qtype, edns), transport, 2000);
          const what = `${shown} (${path}, ${transport}, EDNS ${edns ?? 'off'})`;
          assert.equal(reply[3]! & 0xf, c.rcode, what);
          assert.equal(reply.readUInt16BE(6), 0, `no answer for ${what}`);
          const soa = negativeSoa(reply); // walkReply: every name and record in bounds, nothing after the last
          assert.equal(soa.owner, 'cluster.local', what);
          assert.equal(soa.mname, 'ns.dns.cluster.local', what);
          assert.equal(soa.rname, 'hostmaster.cluster.local', what);
          assert.equal(soa.ownerIsPointer, c.compressed, what);
          // compressed, the owner points at the zone's labels ending the question; written out, 15
          // octets, with the two names pointing at it
          assert.equal(soa.size, c.compressed ? 54 : 15 + 10 + 9 + 13 + 20, what);
          if (c.compressed) assert.equal(soa.ownerTarget, soa.start - 4 - 15, what);
          // and the record decodes to the zone's SOA, the one an SOA query answers
          assert.deepEqual(dnsPacket.decode(reply).authorities?.[0], zoneSoa, what);
        }
      }
    }
  }
});

test('the negative template compresses only where a name truly ends with the SOA owner', () => {
  const soaOf = (mname: string): dnsPacket.Answer => ({ name: 'cluster.local', type: 'SOA', ttl: 30, class: 'IN', data: { mname, rname: 'hostmaster.cluster.local', serial: 7, refresh: 28800, retry: 7200, expire: 604800, minimum: 30 } });
  const negative = (labels: Buffer[], soa: dnsPacket.Answer, limit = 512) => {
    const bytes = rawQuery(5, labels, 1);
    const q = parseQuery(bytes);
    assert.ok(q.ok);
    return encodeNegative(bytes, q, 3, true, soa, limit);
  };
  // the question's last 15 octets read \x07cluster\x05local\x00, but inside a label: no pointer there
  const inside = [Buffer.from('a\x07cluster', 'latin1'), Buffer.from('local')];
  const r1 = negative(inside, soaOf('ns.dns.cluster.local'))!;
  const s1 = negativeSoa(r1);
  assert.equal(s1.ownerIsPointer, false);
  assert.deepEqual([s1.owner, s1.mname, s1.rname], ['cluster.local', 'ns.dns.cluster.local', 'hostmaster.cluster.local']);
  // a primary name outside the zone is written out; the mailbox still points at the owner
  const r2 = negative(labelsOf('nosuch.default.svc.cluster.local'), soaOf('ns1.example.org'))!;
  const s2 = negativeSoa(r2);
  assert.equal(s2.ownerIsPointer, true);
  assert.deepEqual([s2.owner, s2.mname, s2.rname], ['cluster.local', 'ns1.example.org', 'hostmaster.cluster.local']);
  assert.equal(s2.size, 2 + 10 + 17 + 13 + 20);
  // a name that only looks like the zone's end ("xcluster.local") is no suffix of it
  const r3 = negative(labelsOf('a.xcluster.local'), soaOf('ns.xcluster.local'))!;
  const s3 = negativeSoa(r3);
  assert.equal(s3.ownerIsPointer, false);
  assert.deepEqual([s3.owner, s3.mname], ['cluster.local', 'ns.xcluster.local']);
  // the size limit counts the compressed form: 12 + 38 (question) + 54 fits 104 octets, not 103
  assert.ok(negative(labelsOf('nosuch.default.svc.cluster.local'), soaOf('ns.dns.cluster.local'), 104));
  assert.equal(negative(labelsOf('nosuch.default.svc.cluster.local'), soaOf('ns.dns.cluster.local'), 103), undefined);
});

test('over UDP the additional section keeps whole RRsets (RFC 2181 9): a target name of many addresses comes whole or not at all, never cut', async (t) => {
  const s = await startStack();
  t.after(s.stop);
  // 80 endpoints under one hostname (a Deployment whose pod template sets it): one RRset of 80 A
  s.zone.setService(headless('t', 'shared'));
  s.zone.setSlice(slice('t', 'shared-a', 'shared', Array.from({ length: 80 }, (_, i) => ep(`10.9.0.${i + 1}`, 'foo')), [port('http', 80)]));
  // 14 endpoints of two addresses each: 14 RRsets of 2 A
  s.zone.setService(headless('t', 'pairs'));
  s.zone.setSlice(
    slice('t', 'pairs-a', 'pairs', Array.from({ length: 14 }, (_, i) => ({ addresses: [`10.7.0.${i + 1}`, `10.7.1.${i + 1}`], hostname: `pair-${i}`, ready: true })), [port('http', 80)]),
  );
  for (const [name, sizes] of [['_http._tcp.shared.t.svc.cluster.local', [1232, 4096]], ['_http._tcp.pairs.t.svc.cluster.local', [800, 1000, 1232]]] as const) {
    for (const ednsUdpSize of sizes) {
      const r = await query(s.server, { name, type: 'SRV', ednsUdpSize });
      if (ednsUdpSize === 1232) assert.equal(r.packet.flag_tc, false, `${name} at ${ednsUdpSize}: the SRV answer fits`);
      if (r.packet.flag_tc) continue; // the answer itself was cut: the client asks over TCP
      const byOwner = new Map<string, number>();
      for (const a of r.packet.additionals ?? []) if (a.type === 'A') byOwner.set(a.name, (byOwner.get(a.name) ?? 0) + 1);
      const whole = name.startsWith('_http._tcp.shared') ? 80 : 2;
      for (const [owner, n] of byOwner) assert.equal(n, whole, `${name} at ${ednsUdpSize}: ${owner} has ${n} of its ${whole} addresses`);
    }
  }
});
