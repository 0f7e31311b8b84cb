// The DNS server layer: wire parsing, EDNS, truncation, the encoded-response cache, hostile input,
// the UDP and TCP listeners. The zone is replaced by a small resolver written here so these tests
// pin the server's own behaviour; the full stack is tested in integration-*.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import * as dnsPacket from 'dns-packet';
import { silentLogger } from '@kube-dns/config';
import { buildQuery, datas, exchange, query } from '@kube-dns/dns-client';
import { startTestDnsServer } from '@kube-dns/testkit';
import { DnsHandler } from '../src/server/handler.js';
import { TcpListener } from '../src/server/tcp.js';
import { UdpListener } from '../src/server/udp.js';
import type { Resolution } from '../src/resolve/types.js';
import { Forwarder } from '../src/forward/forwarder.js';
import { AbsentNames } from '../src/resolve/absent.js';
import { resolve } from '../src/resolve/resolve.js';
import { Zone } from '../src/records/zone.js';
import { answerBudget } from '../src/server/encode.js';
import { resetRotation } from '../src/server/rotate.js';
import * as F from './resolve-fixtures.js';
import type { ResolveOptions } from '../src/resolve/types.js';
import { rawQuery, readName, sameLabels, walkReply } from './wire-check.js';
import { fuzzSeed, realisticZone } from './fuzz-kit.js';

const log = silentLogger();

/** A zone of one service "big" with `n` A records, and "small" with one, under cluster.local. */
function fixture(n = 100) {
  const gens = new Map<string, number>();
  let generation = 1;
  const zone = {
    get generation() {
      return generation;
    },
    depGeneration: (dep: string) => gens.get(dep) ?? 0,
    bump(dep: string) {
      gens.set(dep, ++generation);
    },
  };
  let smallIp = '10.0.0.1';
  let resolves = 0;
  const resolve = (name: string, qtype: string): Resolution => {
    resolves++;
    const l = name.toLowerCase();
    const base = { aa: true as const, authorities: [] as dnsPacket.Answer[], additionals: [] as dnsPacket.Answer[], cluster: true as const };
    if (!l.endsWith('cluster.local')) return { ...base, action: 'forward', rcode: 'NOERROR', aa: false, answers: [], cluster: false, dep: 'static' };
    if (l === 'big.default.svc.cluster.local' && qtype === 'A') {
      const answers = Array.from({ length: n }, (_, i) => ({ name, type: 'A' as const, ttl: 30, data: `10.1.${i >> 8}.${i & 255}` }));
      return { ...base, action: 'answer', rcode: 'NOERROR', answers, dep: 'svc/default/big' };
    }
    if (/^many\d+\.default\.svc\.cluster\.local$/.test(l) && qtype === 'A') {
      return { ...base, action: 'answer', rcode: 'NOERROR', answers: [{ name, type: 'A', ttl: 30, data: '10.0.0.9' }], dep: `svc/default/${l.split('.')[0]}` };
    }
    if (l === 'small.default.svc.cluster.local' && qtype === 'A') {
      return { ...base, action: 'answer', rcode: 'NOERROR', answers: [{ name, type: 'A', ttl: 30, data: smallIp }], dep: 'svc/default/small' };
    }
    const soa = { name: 'cluster.local', type: 'SOA' as const, ttl: 30, data: { mname: 'ns.dns.cluster.local', rname: 'hostmaster.cluster.local', serial: 1, refresh: 28800, retry: 7200, expire: 604800, minimum: 30 } };
    return { ...base, action: 'answer', rcode: 'NXDOMAIN', answers: [], authorities: [soa], dep: 'static' };
  };
  return {
    zone,
    resolve,
    setSmallIp(ip: string) {
      smallIp = ip;
      zone.bump('svc/default/small');
    },
    get resolves() {
      return resolves;
    },
  };
}

async function startServer(opts: { synced?: boolean; upstreamPort?: number; n?: number; cacheBytes?: number; host?: string } = {}) {
  const host = opts.host ?? '127.0.0.1';
  const fx = fixture(opts.n);
  const forwarder = new Forwarder({ log, timeoutMs: 300 });
  if (opts.upstreamPort) forwarder.setUpstreams([{ host: '127.0.0.1', port: opts.upstreamPort, family: 4, raw: '' }]);
  let synced = opts.synced ?? true;
  const handler = new DnsHandler({ zone: fx.zone, resolve: fx.resolve, forwarder, isSynced: () => synced, log, cacheBytes: opts.cacheBytes, malformedRepliesPerSecond: Infinity });
  let udp: UdpListener;
  let tcp: TcpListener;
  let port: number;
  for (let attempt = 0; ; attempt++) {
    // the UDP port picked may be taken on TCP by a parallel test's outgoing connection: retry
    udp = new UdpListener(handler, log);
    tcp = new TcpListener(handler, log, { idleTimeoutMs: 500 });
    port = await udp.listen(host, 0);
    try {
      await tcp.listen(host, port);
      break;
    } catch (e) {
      await udp.close(0);
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt > 20) throw e;
    }
  }
  return {
    fx,
    handler,
    server: { host, port },
    setSynced: (v: boolean) => (synced = v),
    stop: async () => {
      await udp.close();
      await tcp.close();
    },
  };
}

test('UDP replies go back to the address each query came from, IPv4 and IPv6, answered at once or forwarded', async (t) => {
  // the listener hands reply addresses to send() through a lookup of its own (server/udp.ts)
  const upstream = await startTestDnsServer({ answerIp: '192.0.2.7' });
  t.after(() => upstream.close());
  for (const host of ['127.0.0.1', '::1']) {
    const s = await startServer({ host, upstreamPort: upstream.port });
    t.after(s.stop);
    for (let i = 0; i < 2; i++) {
      // the second round comes from the response cache
      const a = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A' });
      assert.deepEqual(datas(a.packet.answers), ['10.0.0.1'], `${host}, round ${i}`);
    }
    const nx = await query(s.server, { name: 'nope.default.svc.cluster.local', type: 'A' });
    assert.equal(nx.packet.rcode, 'NXDOMAIN', host);
    const fwd = await query(s.server, { name: 'www.example.org', type: 'A' });
    assert.deepEqual(datas(fwd.packet.answers), ['192.0.2.7'], host);
  }
});

test('a UDP answer that does not fit 512 bytes is truncated with TC; TCP carries all of it', async (t) => {
  const s = await startServer();
  t.after(s.stop);
  const udp = await query(s.server, { name: 'big.default.svc.cluster.local', type: 'A' });
  assert.equal(udp.packet.flag_tc, true);
  assert.ok(udp.bytes.length <= 512, `UDP reply of ${udp.bytes.length} bytes`);
  assert.ok((udp.packet.answers?.length ?? 0) < 100);
  const tcp = await query(s.server, { name: 'big.default.svc.cluster.local', type: 'A', transport: 'tcp' });
  assert.equal(tcp.packet.flag_tc, false);
  assert.equal(tcp.packet.answers?.length, 100);
  const retried = await query(s.server, { name: 'big.default.svc.cluster.local', type: 'A', retryTcpOnTruncation: true });
  assert.equal(retried.transport, 'tcp');
  assert.equal(retried.packet.answers?.length, 100);
});

test('EDNS0: the client size is honoured up to 1232 (never more over UDP), OPT is echoed, DO is echoed', async (t) => {
  const s = await startServer();
  t.after(s.stop);
  const r1232 = await query(s.server, { name: 'big.default.svc.cluster.local', type: 'A', ednsUdpSize: 1232 });
  assert.ok(r1232.bytes.length <= 1232 && r1232.bytes.length > 512);
  assert.equal(r1232.packet.flag_tc, true);
  const opt = r1232.packet.additionals?.find((a) => a.type === 'OPT') as dnsPacket.OptAnswer | undefined;
  assert.ok(opt, 'OPT record in the reply');
  // a client advertising 4096 still gets at most 1232 bytes over UDP (no IP fragmentation): TC
  const r4096 = await query(s.server, { name: 'big.default.svc.cluster.local', type: 'A', ednsUdpSize: 4096, dnssecOk: true });
  assert.ok(r4096.bytes.length <= 1232 && r4096.bytes.length > 1000, `UDP reply of ${r4096.bytes.length} bytes`);
  assert.equal(r4096.packet.flag_tc, true);
  const opt2 = r4096.packet.additionals?.find((a) => a.type === 'OPT') as dnsPacket.OptAnswer & { flag_do?: boolean };
  assert.equal(opt2.flag_do, true);
  const tcp = await query(s.server, { name: 'big.default.svc.cluster.local', type: 'A', ednsUdpSize: 4096, transport: 'tcp' });
  assert.equal(tcp.packet.flag_tc, false);
  assert.equal(tcp.packet.answers?.length, 100);
  // a client advertising 64 KiB is capped too
  const big = await startServer({ n: 400 });
  t.after(big.stop);
  const r = await query(big.server, { name: 'big.default.svc.cluster.local', type: 'A', ednsUdpSize: 65000 });
  assert.ok(r.bytes.length <= 1232, `UDP reply of ${r.bytes.length} bytes`);
  assert.equal(r.packet.flag_tc, true);
  // a client advertising less than 1232 gets no more than it asked for
  const r800 = await query(s.server, { name: 'big.default.svc.cluster.local', type: 'A', ednsUdpSize: 800 });
  assert.ok(r800.bytes.length <= 800 && r800.bytes.length > 512, `UDP reply of ${r800.bytes.length} bytes`);
  assert.equal(r800.packet.flag_tc, true);
  const none = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A' });
  assert.equal(none.packet.additionals?.length ?? 0, 0, 'no OPT for a query without EDNS');
});

test('a forwarded reply larger than the client may take over UDP is relayed as TC; TCP relays all of it', async (t) => {
  const many = Array.from({ length: 150 }, (_, i) => `192.0.2.${i}`);
  const up = await startTestDnsServer({
    handler: (q) => (q.type === 'A' ? { answers: many.map((data) => ({ name: q.name, type: 'A' as const, ttl: 60, data })) } : { rcode: 'NXDOMAIN' }),
  });
  t.after(() => up.close());
  const s = await startServer({ upstreamPort: up.port });
  t.after(s.stop);
  const udp = await query(s.server, { name: 'many.example.org', type: 'A', ednsUdpSize: 4096, id: 321 });
  assert.ok(udp.bytes.length <= 1232, `relayed UDP reply of ${udp.bytes.length} bytes`);
  assert.equal(udp.packet.flag_tc, true);
  assert.equal(udp.packet.id, 321);
  assert.equal(udp.packet.questions?.[0]?.name, 'many.example.org');
  const tcp = await query(s.server, { name: 'many.example.org', type: 'A', ednsUdpSize: 4096, transport: 'tcp' });
  assert.equal(tcp.packet.flag_tc, false);
  assert.equal(tcp.packet.answers?.length, 150);
});

test('the response cache answers repeated questions with the client ID and spelling, misses after a change to that service, and keeps other services\' answers', async (t) => {
  const s = await startServer();
  t.after(s.stop);
  const first = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A', id: 1 });
  assert.deepEqual(datas(first.packet.answers), ['10.0.0.1']);
  const resolvesAfterFirst = s.fx.resolves;
  const second = await query(s.server, { name: 'SmAlL.DeFault.svc.cluster.LOCAL', type: 'A', id: 4242 });
  assert.equal(s.fx.resolves, resolvesAfterFirst, 'served from the cache');
  assert.equal(second.packet.id, 4242);
  assert.equal(second.packet.questions?.[0]?.name, 'SmAlL.DeFault.svc.cluster.LOCAL');
  assert.equal(second.packet.answers?.[0]?.name, 'SmAlL.DeFault.svc.cluster.LOCAL', 'answer owner echoes the question case');
  assert.deepEqual(datas(second.packet.answers), ['10.0.0.1']);
  await query(s.server, { name: 'many1.default.svc.cluster.local', type: 'A' });
  s.fx.setSmallIp('10.0.0.2');
  const third = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A' });
  assert.deepEqual(datas(third.packet.answers), ['10.0.0.2']);
  // a change to "small" leaves the cached answer about another service in place
  const resolvesBefore = s.fx.resolves;
  const other = await query(s.server, { name: 'many1.default.svc.cluster.local', type: 'A' });
  assert.deepEqual(datas(other.packet.answers), ['10.0.0.9']);
  assert.equal(s.fx.resolves, resolvesBefore, 'another service\'s answer still served from the cache');
  // RD is echoed from each query, also on cache hits
  const nord = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A', rd: false });
  assert.equal(nord.packet.flag_rd, false);
  const rd = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A' });
  assert.equal(rd.packet.flag_rd, true);
});

test('the response cache stays within --response-cache-bytes, counting the memory its replies really hold', async (t) => {
  const s = await startServer({ cacheBytes: 256 * 1024 });
  t.after(s.stop);
  for (let i = 0; i < 5000; i++) {
    const r = s.handler.handle(buildQuery({ name: `many${i}.default.svc.cluster.local`, type: 'A', id: i }), 'udp');
    assert.ok(Buffer.isBuffer(r));
  }
  const c = s.handler.cache;
  assert.ok(c.size > 100, `${c.size} entries kept`);
  assert.ok(c.bytes <= 256 * 1024, `${c.bytes} bytes counted`);
  // the replies are not slices of Node's shared 8 KiB pool: what they keep alive is what is counted
  assert.ok(c.retainedBytes() <= c.bytes, `${c.retainedBytes()} bytes retained for ${c.bytes} counted`);
  // and a reply is still right after all that eviction
  const r = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A' });
  assert.deepEqual(datas(r.packet.answers), ['10.0.0.1']);
});

test('the response cache keys by size class: one entry serves every EDNS size it fits, a cut reply only its own size', async (t) => {
  const s = await startServer();
  t.after(s.stop);
  await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A', ednsUdpSize: 1232 });
  const after = s.fx.resolves;
  for (const size of [1000, 4096, 800, 1232, 600]) {
    const r = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A', ednsUdpSize: size });
    assert.deepEqual(datas(r.packet.answers), ['10.0.0.1']);
  }
  assert.equal(s.fx.resolves, after, 'every size served by the one entry');
  assert.equal(s.handler.cache.size, 1);
  // a truncated reply is only right for the size it was cut to
  for (const size of [800, 1232, 800, 600, 1232]) {
    const r = await query(s.server, { name: 'big.default.svc.cluster.local', type: 'A', ednsUdpSize: size });
    assert.equal(r.packet.flag_tc, true);
    assert.ok(r.bytes.length <= size && r.bytes.length > size - 20, `${r.bytes.length} bytes for a limit of ${size}`);
  }
});

test('ANY is REFUSED; a non-IN class is REFUSED; an unknown opcode is NOTIMP; a meta-type is FORMERR or NOTIMP; EDNS version 1 is BADVERS', async (t) => {
  const s = await startServer();
  t.after(s.stop);
  const any = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'ANY' as dnsPacket.RecordType });
  assert.equal(any.packet.rcode, 'REFUSED');
  const ch = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'TXT', class: 'CH' });
  assert.equal(ch.packet.rcode, 'REFUSED');
  const q = buildQuery({ name: 'small.default.svc.cluster.local', type: 'A' });
  q.writeUInt16BE(q.readUInt16BE(2) | (2 << 11), 2); // opcode STATUS
  const r = s.handler.handle(q, 'udp') as Buffer;
  assert.equal(r.readUInt16BE(2) & 0xf, 4);
  const v1 = buildQuery({ name: 'small.default.svc.cluster.local', type: 'A', ednsUdpSize: 1232 });
  v1.writeUInt8(1, v1.length - 11 + 6); // OPT ttl byte 2: version
  const bv = dnsPacket.decode(s.handler.handle(v1, 'udp') as Buffer);
  const opt = bv.additionals?.find((a) => a.type === 'OPT') as { extendedRcode?: number } | undefined;
  assert.ok(opt);
  assert.equal(opt.extendedRcode, 1, 'BADVERS is extended rcode 16 = 1<<4');
  // and on the wire: header rcode 0 (16 & 0xf), no answer, the question echoed, our OPT version 0
  const wire = await exchange(s.server, v1, 'udp', 2000);
  assert.equal(wire.readUInt16BE(0), v1.readUInt16BE(0));
  assert.equal(wire.readUInt16BE(2) & 0xf, 0);
  assert.equal(wire.readUInt16BE(6), 0, 'no answer records');
  const decoded = dnsPacket.decode(wire);
  assert.equal(decoded.questions?.[0]?.name, 'small.default.svc.cluster.local');
  const wopt = decoded.additionals?.find((a) => a.type === 'OPT') as { extendedRcode?: number; ednsVersion?: number; udpPayloadSize?: number } | undefined;
  assert.equal(wopt?.extendedRcode, 1);
  assert.equal(wopt?.ednsVersion, 0, 'we answer with the version we speak');
  assert.equal(wopt?.udpPayloadSize, 1232);
  // a meta-type as the question: no such record exists to be asked for (BIND answers the same),
  // and never an authoritative empty answer kept in the cache
  for (const [qtype, rcode] of [[41, 'FORMERR'], [249, 'FORMERR'], [250, 'FORMERR'], [253, 'NOTIMP'], [254, 'NOTIMP']] as const) {
    for (const name of ['small.default.svc.cluster.local', 'default.svc.cluster.local', 'www.example.org']) {
      const m = buildQuery({ name, type: 'A' });
      m.writeUInt16BE(qtype, m.length - 4);
      const reply = dnsPacket.decode(await exchange(s.server, m, 'udp', 2000)) as dnsPacket.DecodedPacket & { rcode: string };
      assert.equal(reply.rcode, rcode, `${name} type ${qtype}`);
      assert.equal(reply.answers?.length ?? 0, 0);
    }
  }
  assert.equal(s.handler.cache.size, 0, 'none of them cached');
  // a BADVERS reply is never cached as the answer to a version-0 query
  const v0 = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A', ednsUdpSize: 1232 });
  assert.equal(v0.packet.rcode, 'NOERROR');
  assert.deepEqual(datas(v0.packet.answers), ['10.0.0.1']);
});

test('malformed and hostile packets get FORMERR or nothing, never a crash', async (t) => {
  const s = await startServer();
  t.after(s.stop);
  const formerr = (b: Buffer) => {
    const r = s.handler.handle(b, 'udp');
    return Buffer.isBuffer(r) ? r.readUInt16BE(2) & 0xf : undefined;
  };
  assert.equal(s.handler.handle(Buffer.from([1, 2, 3]), 'udp'), undefined, 'shorter than a header: dropped');
  const good = buildQuery({ name: 'small.default.svc.cluster.local', type: 'A' });
  const noQuestion = Buffer.from(good.subarray(0, 12));
  noQuestion.writeUInt16BE(0, 4);
  assert.equal(formerr(noQuestion), 1);
  const twoQuestions = Buffer.from(good);
  twoQuestions.writeUInt16BE(2, 4);
  assert.equal(formerr(twoQuestions), 1);
  const truncatedName = Buffer.from(good.subarray(0, 20));
  assert.equal(formerr(truncatedName), 1);
  const pointer = Buffer.concat([good.subarray(0, 12), Buffer.from([0xc0, 0x0c, 0, 1, 0, 1])]);
  assert.equal(formerr(pointer), 1, 'a compression loop in the question');
  // RFC 1035 2.3.4: a name is 255 octets at most on the wire (253 dotted)
  const named = (d: number) => buildQuery({ name: ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), `${'d'.repeat(d)}.cluster.local`].join('.'), type: 'A' });
  assert.equal(named(47).length, 12 + 255 + 4);
  assert.equal(formerr(named(47)), 3, 'a 255-octet name is a name: NXDOMAIN in the zone');
  assert.equal(formerr(named(48)), 1, 'a 256-octet name: FORMERR');
  const response = Buffer.from(good);
  response.writeUInt16BE(response.readUInt16BE(2) | 0x8000, 2);
  assert.equal(s.handler.handle(response, 'udp'), undefined, 'responses are never answered (no reflection loops)');
  // random garbage (seeded: see fuzzSeed): thousands of packets, no throw, replies (if any) are well-formed DNS
  const { seed, rng } = fuzzSeed(t);
  const randomBytes = (n: number) => Buffer.from(Array.from({ length: n }, () => rng.int(256)));
  for (let i = 0; i < 5000; i++) {
    const junk = i % 2 ? randomBytes(1 + (i % 300)) : Buffer.concat([good.subarray(0, 12), randomBytes(i % 64)]);
    const r = await s.handler.handle(junk, i % 3 ? 'udp' : 'tcp');
    if (r) assert.doesNotThrow(() => dnsPacket.decode(r), `packet ${i} of seed ${seed}: ${junk.toString('hex')}`);
  }
  // and the server still answers over the network
  const after = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A' });
  assert.deepEqual(datas(after.packet.answers), ['10.0.0.1']);
});

test('before the first sync cluster names get SERVFAIL, not a wrong NXDOMAIN', async (t) => {
  const s = await startServer({ synced: false });
  t.after(s.stop);
  const r = await query(s.server, { name: 'nosuch.default.svc.cluster.local', type: 'A' });
  assert.equal(r.packet.rcode, 'SERVFAIL');
  s.setSynced(true);
  const r2 = await query(s.server, { name: 'nosuch.default.svc.cluster.local', type: 'A' });
  assert.equal(r2.packet.rcode, 'NXDOMAIN');
});

test('names outside the zone are forwarded; all upstreams down gives SERVFAIL (the original sent nothing)', async (t) => {
  const up = await startTestDnsServer({ answerIp: '192.0.2.9' });
  t.after(() => up.close());
  const s = await startServer({ upstreamPort: up.port });
  t.after(s.stop);
  const r = await query(s.server, { name: 'www.example.org', type: 'A', id: 777 });
  assert.equal(r.packet.id, 777);
  assert.deepEqual(datas(r.packet.answers), ['192.0.2.9']);
  assert.equal(up.questions.at(-1)?.name, 'www.example.org');
  const tcp = await query(s.server, { name: 'tcp.example.org', type: 'A', transport: 'tcp' });
  assert.deepEqual(datas(tcp.packet.answers), ['192.0.2.9']);
  assert.equal(up.questions.at(-1)?.transport, 'tcp', 'forwarded over the client transport');
  await up.close();
  const dead = await query(s.server, { name: 'www.example.org', type: 'A', timeoutMs: 3000 });
  assert.equal(dead.packet.rcode, 'SERVFAIL');
});

test('TCP: several queries pipelined on one connection are all answered; idle connections are closed', async (t) => {
  const s = await startServer();
  t.after(s.stop);
  const sock = connect(s.server.port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  const ids = [11, 12, 13, 14, 15];
  const frames = ids.map((id, i) => {
    const q = buildQuery({ name: i % 2 ? 'small.default.svc.cluster.local' : 'nosuch.default.svc.cluster.local', type: 'A', id });
    const len = Buffer.alloc(2);
    len.writeUInt16BE(q.length);
    return Buffer.concat([len, q]);
  });
  // one write, then the frames split at odd places: the server must reassemble
  const all = Buffer.concat(frames);
  sock.write(all.subarray(0, 7));
  sock.write(all.subarray(7));
  const got: number[] = [];
  let buf = Buffer.alloc(0);
  await new Promise<void>((resolve) => {
    sock.on('data', (c) => {
      buf = Buffer.concat([buf, c]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        got.push(dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))).id!);
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
      if (got.length === ids.length) resolve();
    });
  });
  assert.deepEqual(got.sort(), ids);
  const closed = await new Promise<boolean>((resolve) => {
    sock.once('close', () => resolve(true));
    setTimeout(() => resolve(false), 3000);
  });
  assert.equal(closed, true, 'idle connection closed by the server');
});

// ---- the fuzz test: the real resolver and encoder, a realistic zone, every reply checked ----

test('fuzz: every reply of the real resolver and encoder matches its question (seeded; KUBE_DNS_FUZZ_SEED replays)', async (t) => {
  const { seed, rng } = fuzzSeed(t);
  const iterations = Number(process.env.KUBE_DNS_FUZZ_ITERATIONS ?? 10_000);
  const { zone, names } = realisticZone();
  const opts: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'insecure', serial: 1, wildcards: rng.int(2) === 1 };
  const handler = new DnsHandler({
    zone,
    resolve: (name, qtype) => resolve(zone, name, qtype, opts),
    absent: new AbsentNames(opts, zone.presence), // as the server runs: common NXDOMAINs from the bytes
    forwarder: new Forwarder({ log, timeoutMs: 50 }), // no upstreams: forwarded names get SERVFAIL
    isSynced: () => true,
    log,
    cacheEntries: 500, // small, so the fuzz exercises eviction and hits alike
    malformedRepliesPerSecond: Infinity, // every malformed input exercises the error reply
  });
  const QTYPES = [1, 28, 33, 12, 5, 16, 6, 2, 15, 65, 255, 99, 4242, 65535];
  const label = (): Buffer => {
    switch (rng.int(6)) {
      case 0:
        return Buffer.from(Array.from({ length: 1 + rng.int(63) }, () => rng.int(256)));
      case 1:
        return Buffer.alloc(63, 0xff);
      case 2:
        return Buffer.from('*');
      default:
        return Buffer.from(rng.pick(['a', 'web', 'pod-1', '_http', '_tcp', '10-0-0-1', 'xn--bcher-kva', 'UPPER']));
    }
  };
  const spell = (name: string): Buffer[] =>
    name.split('.').map((l) => Buffer.from([...Buffer.from(l)].map((b) => (b >= 0x61 && b <= 0x7a && rng.int(2) ? b - 0x20 : b))));
  let checked = 0;
  for (let i = 0; i < iterations; i++) {
    let labels: Buffer[];
    const kind = rng.int(10);
    if (kind < 6) labels = spell(rng.pick(names));
    else if (kind < 9) {
      labels = spell(rng.pick(names));
      for (let k = rng.int(3); k >= 0; k--) labels.splice(rng.int(labels.length + 1), 0, label());
    } else labels = Array.from({ length: 1 + rng.int(6) }, label);
    // keep the name legal (<= 255 octets on the wire): the parser's FORMERR is tested elsewhere
    while (labels.reduce((n, l) => n + l.length + 1, 1) > 255) labels.shift();
    const qtype = rng.pick(QTYPES);
    const edns = rng.pick([undefined, 512, 800, 1232, 1400, 4096, 65535]);
    const transport = rng.int(4) === 0 ? 'tcp' : 'udp';
    const id = rng.int(65536);
    const q = rawQuery(id, labels, qtype, edns);
    const what = () => `seed ${seed}, query ${i}: ${labels.map((l) => l.toString('latin1')).join('.')} type ${qtype} edns ${edns} ${transport} (${q.toString('hex')})`;
    const reply = (await handler.handle(q, transport)) as Buffer | undefined;
    assert.ok(reply, `no reply: ${what()}`);
    let w: ReturnType<typeof walkReply>;
    try {
      w = walkReply(reply);
    } catch (e) {
      assert.fail(`malformed reply (${(e as Error).message}): ${what()}\n${reply.toString('hex')}`);
    }
    // messages are built only on failure: what() hex-dumps the query
    const check = (ok: boolean, why: () => string) => {
      if (!ok) assert.fail(`${why()}: ${what()}\n${reply.toString('hex')}`);
    };
    check(w.id === id, () => `ID ${w.id}`);
    check((w.flags & 0x8000) !== 0, () => 'QR not set');
    check(sameLabels(w.question, labels), () => 'question not echoed exactly');
    check(w.qtype === qtype, () => `qtype ${w.qtype}`);
    const limit = transport === 'tcp' ? 65535 : edns === undefined ? 512 : Math.min(Math.max(edns, 512), 1232);
    check(reply.length <= limit, () => `${reply.length} bytes over a limit of ${limit}`);
    if (transport === 'tcp') check((w.flags & 0x0200) === 0, () => 'TC over TCP');
    // answer owners: the question's own bytes, or (case aside) the target of a CNAME before them
    const owners = [labels];
    const lower = (ls: Buffer[]) => ls.map((l) => l.toString('latin1').replace(/[A-Z]/g, (c) => c.toLowerCase())).join('.');
    for (const r of w.records) {
      if (r.section !== 'answer') continue;
      check(owners.some((o) => sameLabels(o, r.owner) || (o !== labels && lower(o) === lower(r.owner))), () => `answer owner ${lower(r.owner)}`);
      if (r.type === 5) owners.push(readName(reply, r.rdataOffset).labels);
    }
    const rcode = w.flags & 0xf;
    check([0, 2, 3, 5].includes(rcode), () => `rcode ${rcode}`);
    if (labels.every((l) => l.every((b) => b < 0x80))) {
      try {
        dnsPacket.decode(reply);
      } catch (e) {
        check(false, () => `dns-packet cannot decode it: ${(e as Error).message}`);
      }
    }
    checked++;
  }
  assert.equal(checked, iterations);
});

test('a headless Service of 1,000 endpoints: the resolver builds only the addresses the reply can carry, and the reply is the whole answer\'s, byte for byte', () => {
  const zone = new Zone();
  zone.setService(F.headless('ns0', 'big'));
  const eps = Array.from({ length: 1000 }, (_, j) => F.ep(`10.200.${j >> 8}.${j & 255}`, j % 2 ? `pod-${j}` : ''));
  zone.setSlice(F.slice('ns0', 'big-x', 'big', eps, [F.port('http', 8080), F.port('metrics', 9090)]));
  const opts: ResolveOptions = { ...F.OPTS, wildcards: false };
  let built = 0;
  const handler = (budgeted: boolean) =>
    new DnsHandler({
      zone,
      resolve: (n, t, l, budget) => {
        const r = resolve(zone, n, t, opts, l, budgeted ? budget : undefined);
        built = r.answers.length;
        return r;
      },
      forwarder: { forward: async () => undefined },
      isSynced: () => true,
      log,
      cacheEntries: 0, // every question resolved
    });
  const [budgeted, whole] = [handler(true), handler(false)];
  const questions: [string, string][] = [
    ['big.ns0.svc.cluster.local', 'A'],
    ['BIG.ns0.svc.cluster.local', 'A'],
    ['big.ns0.svc.cluster.local', 'SRV'],
    ['_http._tcp.big.ns0.svc.cluster.local', 'SRV'],
  ];
  const ways: ['udp' | 'tcp', number | undefined][] = [['udp', undefined], ['udp', 1232], ['udp', 700], ['tcp', undefined]];
  for (const [name, type] of questions) {
    for (const [transport, size] of ways) {
      const what = `${type} ${name} over ${transport}${size ? `, EDNS ${size}` : ''}`;
      const q = dnsPacket.encode({ type: 'query', id: 7, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: type as 'A' }], ...(size && { additionals: [{ type: 'OPT', name: '.', udpPayloadSize: size } as unknown as dnsPacket.Answer] }) });
      resetRotation();
      const all = whole.handle(q, transport, '127.0.0.1', 53) as Buffer;
      const allBuilt = built;
      resetRotation();
      const cut = budgeted.handle(q, transport, '127.0.0.1', 53) as Buffer;
      assert.deepEqual(cut, all, what);
      if (transport === 'udp' && type === 'A') {
        const limit = size ? Math.min(size, 1232) : 512;
        assert.ok(allBuilt >= 1000 && built <= answerBudget(limit) + 1, `${what}: ${built} records built of ${allBuilt}`);
        assert.equal(dnsPacket.decode(cut).flags! & dnsPacket.TRUNCATED_RESPONSE, dnsPacket.TRUNCATED_RESPONSE, `${what}: TC`);
      } else assert.equal(built, allBuilt, what); // TCP carries all 1,000 addresses; SRV weights need every record
    }
  }
});

test('a budget never leaves an answer short of its reply: an answer that loses repeated records to the dedupe is built whole', () => {
  const zone = new Zone();
  zone.setService(F.headless('ns0', 'big'));
  zone.setSlice(F.slice('ns0', 'big-x', 'big', Array.from({ length: 100 }, (_, j) => F.ep(`10.201.0.${j}`)), [F.port('http', 8080)]));
  // a view listing its first address twice, as no view does today: the cut answer would dedupe to
  // fewer records than the budget, might fit the reply whole and go out without TC
  const built = zone.headless.bind(zone);
  zone.headless = (e, z) => {
    const v = built(e, z);
    return { ...v, endpoints: [v.endpoints[0]!, ...v.endpoints] };
  };
  const opts: ResolveOptions = { ...F.OPTS, wildcards: false };
  assert.equal(resolve(zone, 'big.ns0.svc.cluster.local', 'A', opts, undefined, 10).answers.length, 100);
  assert.equal(resolve(zone, 'big.ns0.svc.cluster.local', 'A', opts, undefined, 200).answers.length, 100);
});
