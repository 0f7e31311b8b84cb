// The DNS server layer: wire parsing, EDNS, truncation, the encoded-response cache, hostile input,
// the UDP and TCP listeners. The zone is replaced by a small resolver written here so these tests
// pin the server's own behaviour; the full stack is tested in integration-*.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import * as dnsPacket from 'dns-packet';
import { silentLogger } from '@kube-dns/config';
import { buildQuery, datas, query } from '@kube-dns/dns-client';
import { startTestDnsServer } from '@kube-dns/testkit';
import { DnsHandler } from '../src/server/handler.js';
import { TcpListener } from '../src/server/tcp.js';
import { UdpListener } from '../src/server/udp.js';
import type { Resolution } from '../src/resolve/types.js';
import { Forwarder } from '../src/forward/forwarder.js';

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

async function startServer(opts: { synced?: boolean; upstreamPort?: number; n?: number; cacheBytes?: number } = {}) {
  const fx = fixture(opts.n);
  const forwarder = new Forwarder({ log, timeoutMs: 300 });
  if (opts.upstreamPort) forwarder.setUpstreams([{ host: '127.0.0.1', port: opts.upstreamPort, family: 4, raw: '' }]);
  let synced = opts.synced ?? true;
  const handler = new DnsHandler({ zone: fx.zone, resolve: fx.resolve, forwarder, isSynced: () => synced, log, cacheBytes: opts.cacheBytes });
  let udp: UdpListener;
  let tcp: TcpListener;
  let port: number;
  for (let attempt = 0; ; attempt++) {
    // the UDP port picked may be taken on TCP by a parallel test's outgoing connection: retry
    udp = new UdpListener(handler, log);
    tcp = new TcpListener(handler, log, { idleTimeoutMs: 500 });
    port = await udp.listen('127.0.0.1', 0);
    try {
      await tcp.listen('127.0.0.1', port);
      break;
    } catch (e) {
      await udp.close(0);
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt > 20) throw e;
    }
  }
  return {
    fx,
    handler,
    server: { host: '127.0.0.1', port },
    setSynced: (v: boolean) => (synced = v),
    stop: async () => {
      await udp.close();
      await tcp.close();
    },
  };
}

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

test('the response cache answers repeated questions with the client ID and spelling, and misses after a zone change', async (t) => {
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
  s.fx.setSmallIp('10.0.0.2');
  const third = await query(s.server, { name: 'small.default.svc.cluster.local', type: 'A' });
  assert.deepEqual(datas(third.packet.answers), ['10.0.0.2']);
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
    const r = s.handler.handle(buildQuery({ name: `nosuch${i}.default.svc.cluster.local`, type: 'A', id: i }), 'udp');
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

test('ANY is REFUSED; a non-IN class is REFUSED; an unknown opcode is NOTIMP; EDNS version 1 is BADVERS', async (t) => {
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
  const response = Buffer.from(good);
  response.writeUInt16BE(response.readUInt16BE(2) | 0x8000, 2);
  assert.equal(s.handler.handle(response, 'udp'), undefined, 'responses are never answered (no reflection loops)');
  // random garbage: thousands of packets, no throw, replies (if any) are well-formed DNS
  for (let i = 0; i < 5000; i++) {
    const junk = i % 2 ? randomBytes(1 + (i % 300)) : Buffer.concat([good.subarray(0, 12), randomBytes(i % 64)]);
    const r = await s.handler.handle(junk, i % 3 ? 'udp' : 'tcp');
    if (r) dnsPacket.decode(r);
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
