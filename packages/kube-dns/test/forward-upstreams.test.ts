// What the forwarder does with upstreams that fail or misbehave, as a client sees it: a dead
// first upstream costs one timeout, not one per query; every upstream silent gives SERVFAIL
// within the forward's deadline; a reply that is not an answer to the question asked is never
// relayed, over UDP or TCP; the client gets its own spelling of the question back; an
// ExternalName whose target's records did not fit over UDP is answered with TC.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import * as dnsPacket from 'dns-packet';
import { silentLogger, type Nameserver } from '@kube-dns/config';
import { buildQuery, datas, rcodeOf, type Transport } from '@kube-dns/dns-client';
import { framed, startRawServer } from '@kube-dns/testkit';
import { Forwarder, type ForwarderOptions } from '../src/forward/forwarder.js';
import { DROP } from '../src/server/reply-budget.js';
import { questionEnd } from '../src/forward/reply-check.js';
import { DnsHandler } from '../src/server/handler.js';
import { Zone } from '../src/records/zone.js';
import { resolve } from '../src/resolve/resolve.js';
import { OPTS, externalName } from './resolve-fixtures.js';
import { KubeDnsMetrics } from '../src/http/metrics.js';
import { setTimeout as sleep } from 'node:timers/promises';

type Reply = (query: Buffer, transport: Transport) => Buffer | undefined;

/** An upstream on UDP and TCP (one port number) whose `reply` decides what goes back (undefined: nothing). */
async function upstream(t: TestContext, reply: Reply) {
  const raw = await startRawServer({
    udp: (q, send) => {
      const out = reply(q, 'udp');
      if (out) send(out);
    },
    tcp: (q, conn) => {
      const out = reply(q, 'tcp');
      if (out) conn.write(framed(out));
    },
  });
  t.after(() => raw.close());
  return { ns: { host: raw.host, port: raw.port, family: 4 as const, raw: '' }, asked: () => raw.queries.length };
}

/** An answer to `query` (its ID and question), with `ip`; `edit` changes the decoded packet first. */
function answer(query: Buffer, ip: string, edit: (p: dnsPacket.Packet) => void = () => undefined): Buffer {
  const q = dnsPacket.decode(query);
  const p: dnsPacket.Packet = {
    type: 'response',
    id: q.id,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: q.questions,
    answers: [{ name: q.questions![0]!.name, type: 'A', ttl: 60, data: ip }],
  };
  edit(p);
  return dnsPacket.encode(p);
}

function forwarder(t: TestContext, servers: { ns: Nameserver }[], opts: Partial<ForwarderOptions> = {}) {
  const f = new Forwarder({ log: silentLogger(), timeoutMs: 300, ...opts });
  f.setUpstreams(servers.map((s) => s.ns));
  t.after(() => f.close());
  return f;
}

/** Forwards an A question for `name` (ID 0x4242); the reply decoded, with how long it took. */
async function ask(f: Forwarder, name: string, transport: Transport = 'udp') {
  const q = buildQuery({ name, type: 'A' });
  q.writeUInt16BE(0x4242, 0);
  const started = Date.now();
  const r = await f.forward(q, name.toLowerCase(), transport);
  const ms = Date.now() - started;
  if (r === undefined || r === DROP) return { ms, reply: undefined };
  return { ms, raw: r, reply: dnsPacket.decode(r) };
}
const ips = (r: Awaited<ReturnType<typeof ask>>) => datas(r.reply?.answers ?? []);

test('a dead first upstream costs one timeout, not one per query, and is tried first again once its time is up', async (t) => {
  const dead = await upstream(t, () => undefined);
  const good = await upstream(t, (q) => answer(q, '192.0.2.1'));
  const f = forwarder(t, [dead, good], { downRetryMs: 1500 });
  const first = await ask(f, 'a.example.org');
  assert.deepEqual(ips(first), ['192.0.2.1']);
  assert.ok(first.ms >= 280, `the first query waited for the dead upstream's timeout (${first.ms} ms)`);
  for (const name of ['b.example.org', 'c.example.org', 'd.example.org']) {
    const r = await ask(f, name);
    assert.deepEqual(ips(r), ['192.0.2.1']);
    assert.ok(r.ms < 280, `${name}: answered without waiting for the dead upstream's timeout (${r.ms} ms)`);
  }
  assert.equal(dead.asked(), 1, 'the dead upstream was asked once, then tried last');
  await new Promise((r) => setTimeout(r, 1600));
  assert.deepEqual(ips(await ask(f, 'e.example.org')), ['192.0.2.1']);
  assert.equal(dead.asked(), 2, 'in its place again after downRetryMs, so a recovered first upstream is used again');
});

test('every upstream silent: no answer (the caller sends SERVFAIL) within the deadline, not a timeout per server', async (t) => {
  const dead = [await upstream(t, () => undefined), await upstream(t, () => undefined), await upstream(t, () => undefined)];
  const f = forwarder(t, dead, { timeoutMs: 400, deadlineMs: 600 });
  const r = await ask(f, 'x.example.org');
  assert.equal(r.reply, undefined);
  assert.ok(r.ms >= 550 && r.ms < 1200, `gave up after ${r.ms} ms (the deadline 600, three timeouts 1,200)`);
  assert.deepEqual(dead.map((d) => d.asked()), [1, 1, 0], 'the second server got what was left of the deadline, the third nothing');
});

test('a reply that is not a well-formed answer to the question asked is never relayed, over UDP or TCP', async (t) => {
  const bad: Record<string, Reply> = {
    'another name': (q) => answer(q, '6.6.6.6', (p) => (p.questions = [{ name: 'evil.example.org', type: 'A', class: 'IN' }])),
    'no question': (q) => answer(q, '6.6.6.6', (p) => (p.questions = [])),
    // 33 is 1 | 0x20: a comparison that folds every octet as a letter took SRV for A
    'type SRV for A': (q) => answer(q, '6.6.6.6', (p) => (p.questions = [{ name: p.questions![0]!.name, type: 'SRV', class: 'IN' }])),
    'a digit changed by 0x20': (q) => {
      const r = answer(q, '6.6.6.6');
      r[12 + 1 + 4] = 0x11; // the "1" of host1 (0x31)
      return r;
    },
    'records past its end': (q) => answer(q, '6.6.6.6').subarray(0, -3),
    'a query, not a response': (q) => Buffer.from(q),
  };
  for (const transport of ['udp', 'tcp'] as const) {
    for (const [what, reply] of Object.entries(bad)) {
      const liar = await upstream(t, reply);
      const good = await upstream(t, (q) => answer(q, '192.0.2.9'));
      const f = forwarder(t, [liar, good]);
      const r = await ask(f, 'host1.example.org', transport);
      assert.equal(liar.asked(), 1, `${transport}, ${what}: the first upstream was asked`);
      assert.deepEqual(ips(r), ['192.0.2.9'], `${transport}, ${what}: the next upstream's answer, never the first's`);
      assert.equal(r.reply?.questions?.[0]?.name, 'host1.example.org');
    }
  }
});

test('a TC reply cut short with its counts left is relayed as the question with TC, so the client retries over TCP', async (t) => {
  const cutter = await upstream(t, (q) => {
    const r = answer(q, '192.0.2.3', (p) => (p.flags = (p.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE));
    return r.subarray(0, r.length - 3);
  });
  const f = forwarder(t, [cutter]);
  const r = await ask(f, 'big.example.org');
  assert.ok(r.reply, 'a reply');
  assert.ok(r.reply.flag_tc, 'TC set');
  assert.equal(r.reply.id, 0x4242);
  assert.deepEqual(r.reply.questions?.map((q) => `${q.name} ${q.type}`), ['big.example.org A']);
  assert.equal(r.reply.answers?.length, 0);
  // through the handler, to a client that sent EDNS: our OPT too, its DO echoed (RFC 6891 6.1.1),
  // as when a whole reply does not fit
  const zone = new Zone();
  const handler = new DnsHandler({ zone, resolve: (n, ty, l) => resolve(zone, n, ty, OPTS, l), forwarder: f, isSynced: () => true, log: silentLogger() });
  const edns = dnsPacket.decode((await handler.handle(buildQuery({ name: 'big.example.org', type: 'A', ednsUdpSize: 1232, dnssecOk: true }), 'udp')) as Buffer);
  assert.ok(edns.flag_tc, 'TC set');
  const opt = edns.additionals?.find((x) => x.type === 'OPT') as { udpPayloadSize?: number; flags?: number } | undefined;
  assert.ok(opt, `an OPT record in ${JSON.stringify(edns.additionals)}`);
  assert.equal(opt.udpPayloadSize, 1232);
  assert.ok(((opt.flags ?? 0) & dnsPacket.DNSSEC_OK) !== 0, 'DO echoed');
});

test('the client gets its own spelling of the question back, whatever case the upstream answers in', async (t) => {
  const lower = await upstream(t, (q) => answer(q, '192.0.2.5', (p) => (p.questions = p.questions!.map((x) => ({ ...x, name: x.name.toLowerCase() })))));
  const f = forwarder(t, [lower]);
  for (const transport of ['udp', 'tcp'] as const) {
    const r = await ask(f, 'WwW.ExAmPlE.oRg', transport);
    assert.equal(r.reply?.id, 0x4242);
    assert.equal(r.reply?.questions?.[0]?.name, 'WwW.ExAmPlE.oRg', transport);
    assert.deepEqual(ips(r), ['192.0.2.5']);
  }
});

test("an ExternalName whose target's records do not fit over UDP is answered with TC, and whole over TCP", async (t) => {
  // 100 addresses: more than the 1232 octets of the sub-query over UDP, where the upstream says TC
  const big = await upstream(t, (q, transport) => {
    const full = answer(q, '192.0.2.1', (p) => (p.answers = Array.from({ length: 100 }, (_, i) => ({ name: p.questions![0]!.name, type: 'A' as const, ttl: 60, data: `192.0.2.${i + 1}` }))));
    return transport === 'udp' && full.length > 1232 ? answer(q, '192.0.2.1', (p) => ((p.flags = (p.flags ?? 0) | dnsPacket.TRUNCATED_RESPONSE), (p.answers = []))) : full;
  });
  // the same upstream on both transports: over TCP it answers in full
  const f = forwarder(t, [big]);
  const zone = new Zone();
  zone.setService(externalName('default', 'ext', 'target.example.org'));
  const handler = new DnsHandler({ zone, resolve: (n, ty, l) => resolve(zone, n, ty, OPTS, l), forwarder: f, isSynced: () => true, log: silentLogger() });
  const q = buildQuery({ name: 'ext.default.svc.cluster.local', type: 'A', ednsUdpSize: 1232 });
  const udp = dnsPacket.decode((await handler.handle(q, 'udp')) as Buffer);
  assert.ok(udp.flag_tc, 'TC over UDP: the client asks again over TCP');
  const cname = (p: dnsPacket.DecodedPacket) => (p.answers ?? []).filter((a) => a.type === 'CNAME').map((a) => (a as { data?: unknown }).data);
  assert.deepEqual(cname(udp), ['target.example.org'], 'the CNAME is there');
  const tcp = dnsPacket.decode((await handler.handle(q, 'tcp')) as Buffer);
  assert.ok(!tcp.flag_tc);
  assert.deepEqual(cname(tcp), ['target.example.org']);
  assert.equal(datas(tcp.answers, 'A').length, 100, "every one of the target's addresses over TCP");
});

test('an upstream that answers REFUSED (its ACL, recursion off) is passed over for the next, as SERVFAIL is; REFUSED only when every one refuses', async (t) => {
  const refusing = await upstream(t, (q) => answer(q, '6.6.6.6', (p) => ((p.flags = (p.flags ?? 0) | 5), (p.answers = []))));
  const good = await upstream(t, (q) => answer(q, '192.0.2.7'));
  for (const transport of ['udp', 'tcp'] as const) {
    const r = await ask(forwarder(t, [refusing, good]), 'www.example.org', transport);
    assert.equal(rcodeOf(r.reply!), 'NOERROR', transport);
    assert.deepEqual(ips(r), ['192.0.2.7'], `${transport}: the second upstream's answer`);
  }
  const f = forwarder(t, [refusing]);
  const only = await ask(f, 'www.example.org');
  assert.equal(rcodeOf(only.reply!), 'REFUSED', "the only upstream's REFUSED is relayed, not made a SERVFAIL");
  assert.equal(only.reply?.id, 0x4242);
  assert.equal(f.stats.perServer.get(`${refusing.ns.host}:${refusing.ns.port}`)?.failures, 1, 'counted in kubedns_forward_failures_total');
});

test("a stub-domain server named by a host name: one lookup at a time for all the queries waiting on it, and none waits past the forward's deadline", async (t) => {
  const stub = await upstream(t, (q) => answer(q, '192.0.2.8'));
  // the system resolver as it is when the node's nameservers do not answer: each lookup takes its
  // timeout (glibc: 5 s a try), in one of libuv's four threads
  let lookups = 0;
  const slowLookup = async (): Promise<string | undefined> => {
    lookups++;
    await new Promise((r) => setTimeout(r, 1500));
    return '127.0.0.1';
  };
  const f = forwarder(t, [], { deadlineMs: 500, lookupHost: slowLookup });
  f.setStubDomains(new Map([['corp.example', [{ host: 'ns.corp.example', port: stub.ns.port, family: 0, raw: 'ns.corp.example' }]]]));
  const started = Date.now();
  const first = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(f, `h${i}.corp.example`)));
  const ms = Date.now() - started;
  assert.ok(ms < 1000, `every query gave up at the deadline (500 ms), not after the lookup (1,500 ms): ${ms} ms`);
  assert.ok(first.every((r) => r.reply === undefined), 'no server to ask yet: SERVFAIL');
  assert.equal(lookups, 1, 'one lookup for the twenty queries');
  // the lookup finishes meanwhile, and its address is kept for the queries after it
  await new Promise((r) => setTimeout(r, 1200));
  assert.deepEqual(ips(await ask(f, 'later.corp.example')), ['192.0.2.8']);
  assert.equal(lookups, 1);
});

test('a query forwarded over UDP advertises at most 1232 bytes (the upstream sends TC, not IP fragments); over TCP as the client asked', async (t) => {
  const sizes: string[] = [];
  const up = await upstream(t, (q, transport) => {
    const opt = dnsPacket.decode(q).additionals?.find((a) => a.type === 'OPT') as { udpPayloadSize?: number } | undefined;
    sizes.push(`${transport} ${opt?.udpPayloadSize ?? 'none'}`);
    return answer(q, '192.0.2.1');
  });
  const f = forwarder(t, [up]);
  for (const [size, transport] of [[4096, 'udp'], [1400, 'udp'], [512, 'udp'], [undefined, 'udp'], [4096, 'tcp']] as const) {
    const q = buildQuery({ name: 'big.example.org', type: 'TXT', ...(size ? { ednsUdpSize: size } : {}) });
    const reply = await f.forward(q, 'big.example.org', transport);
    assert.ok(reply && reply !== DROP, `${size} over ${transport} answered`);
  }
  assert.deepEqual(sizes, ['udp 1232', 'udp 1232', 'udp 512', 'udp none', 'tcp 4096']);
});

test('identical questions in flight at once go upstream once; each client gets the reply with its own ID and spelling', async (t) => {
  // each copy in flight is one more (port, ID) an off-path spoofer can hit (RFC 5452 5; dnsmasq's
  // CVE-2020-25686), and a flood of one name would fill the forward cap with copies
  const raw = await startRawServer({ udp: (q, send) => void setTimeout(() => send(answer(q, '192.0.2.8')), 200) });
  t.after(() => raw.close());
  const f = forwarder(t, [{ ns: { host: raw.host, port: raw.port, family: 4, raw: '' } }], { timeoutMs: 2000 });
  const spellings = ['www.victim.example', 'WWW.Victim.Example'];
  const send = (name: string, id: number, type: 'A' | 'AAAA' = 'A') => {
    const q = buildQuery({ name, type });
    q.writeUInt16BE(id, 0);
    return f.forward(q, name.toLowerCase(), 'udp').then((r) => dnsPacket.decode(r as Buffer));
  };
  const replies = await Promise.all([...Array.from({ length: 50 }, (_, i) => send(spellings[i % 2]!, i)), send('www.victim.example', 99, 'AAAA')]);
  const asked = raw.queries.map((q) => `${dnsPacket.decode(q).questions![0]!.type}`);
  assert.deepEqual(asked.sort(), ['A', 'AAAA'], 'one A upstream for the 50 clients, and the AAAA (another question) on its own');
  for (const [i, r] of replies.slice(0, 50).entries()) {
    assert.equal(r.id, i);
    assert.equal(r.questions![0]!.name, spellings[i % 2]);
    assert.deepEqual(datas(r.answers ?? []), ['192.0.2.8']);
  }
  // nothing is kept once the reply is in: the next question goes upstream again
  await send('www.victim.example', 7);
  assert.equal(raw.queries.length, 3);
});

test('queries waiting on an identical one are bounded by the cap too: a flood of one name ends in the overflow, not in memory', async (t) => {
  // each waiting query holds its bytes and state for up to the whole deadline: unbounded, a flood
  // of one name at 70,000 qps held 120 MB of heap in 5 s
  const silent = await upstream(t, () => undefined);
  const f = forwarder(t, [silent], { timeoutMs: 200, deadlineMs: 200, maxConcurrent: 10, overflowRepliesPerSecond: 5 });
  const all = Array.from({ length: 100 }, (_, i) => {
    const q = buildQuery({ name: 'flood.example.org', type: 'A' });
    q.writeUInt16BE(i, 0);
    return f.forward(q, 'flood.example.org', 'udp');
  });
  // the first forwards, 10 wait on it, 9 more forward on their own up to the cap, the rest overflow
  assert.equal(f.joining, 10);
  assert.equal(f.inFlight, 10);
  assert.equal(f.rejected, 80);
  const results = await Promise.all(all);
  assert.equal(results.filter((r) => r === DROP).length, f.overflow.dropped, 'dropped past the overflow budget');
  assert.equal(results.filter((r) => r === undefined).length, 20 + f.overflow.replied, 'SERVFAIL: the forwards, those waiting on one, and the overflow within its budget');
  assert.equal(f.joining, 0);
  assert.equal(f.inFlight, 0);
});

test('the per-server series of a server no longer configured go once it is unused; a configured one stays however idle', async (t) => {
  // upstreams replaced in the ConfigMap, or a stub server named by a headless Service whose pods
  // roll: a series per address ever asked, for the life of the process
  const a = await upstream(t, (q) => answer(q, '192.0.2.1'));
  const b = await upstream(t, (q) => answer(q, '192.0.2.2'));
  const f = forwarder(t, [a], { serverStatsIdleMs: 1500 });
  const m = new KubeDnsMetrics({}, { forwarders: () => f.serverStats() });
  t.after(() => m.close());
  const series = async () => (await m.registry.metrics()).split('\n').filter((l) => l.startsWith('kubedns_forward_')).map((l) => l.replace(/ \d+$/, '')).filter((l) => l.includes('server=')).sort();
  const key = (u: typeof a) => `${u.ns.host}:${u.ns.port}`;
  assert.deepEqual(ips(await ask(f, 'x.example.org')), ['192.0.2.1']);
  f.setUpstreams([b.ns]);
  assert.deepEqual(ips(await ask(f, 'y.example.org')), ['192.0.2.2']);
  assert.equal((await series()).length, 4, 'requests and failures of both, while the old one was used lately');
  await sleep(1700);
  assert.deepEqual(await series(), [`kubedns_forward_failures_total{server="${key(b)}"}`, `kubedns_forward_requests_total{server="${key(b)}"}`]);
  // asked again: its series comes back, from what it counts from now on
  f.setUpstreams([a.ns]);
  await ask(f, 'z.example.org');
  assert.ok((await m.registry.metrics()).includes(`kubedns_forward_requests_total{server="${key(a)}"} 1`));
});

test("EDNS is hop by hop: the client's options do not go upstream, the upstream's (a DNS cookie, a TCP keepalive) do not come back, and the client gets an OPT record as it asked", async (t) => {
  // an upstream's cookie relayed for outside names, when our own answers carry none, made a
  // cookie-aware client (BIND as a forwarder, c-ares) take each cluster answer for a spoof
  const received: { options: number[]; do: boolean; size: number | undefined }[] = [];
  let withOpt = true;
  const up = await upstream(t, (q) => {
    const opt = dnsPacket.decode(q).additionals?.find((a) => a.type === 'OPT') as { options?: { code: number }[]; flags?: number; udpPayloadSize?: number } | undefined;
    received.push({ options: (opt?.options ?? []).map((o) => o.code), do: ((opt?.flags ?? 0) & dnsPacket.DNSSEC_OK) !== 0, size: opt?.udpPayloadSize });
    return answer(q, '192.0.2.1', (p) => {
      // an upstream that adds its OPT whatever was asked, with a server cookie and a keepalive, and no DO
      if (withOpt) p.additionals = [{ type: 'OPT', name: '.', udpPayloadSize: 4096, flags: 0, options: [{ code: 10, data: Buffer.alloc(24, 2) }, { code: 11, timeout: 300 }] } as unknown as dnsPacket.Answer];
    });
  });
  const f = forwarder(t, [up]);
  const zone = new Zone();
  const handler = new DnsHandler({ zone, resolve: (n, ty, l) => resolve(zone, n, ty, OPTS, l), forwarder: f, isSynced: () => true, log: silentLogger() });
  const opt = (p: dnsPacket.DecodedPacket) => p.additionals?.find((a) => a.type === 'OPT') as { options?: { code: number }[]; flags?: number; udpPayloadSize?: number } | undefined;
  const ask = async (edns: boolean, transport: Transport = 'udp') => {
    const q = dnsPacket.encode({
      type: 'query',
      id: 7,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ name: 'www.example.org', type: 'A', class: 'IN' }],
      ...(edns && { additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 4096, flags: dnsPacket.DNSSEC_OK, options: [{ code: 10, data: Buffer.alloc(8, 1) }] } as unknown as dnsPacket.Answer] }),
    });
    return dnsPacket.decode((await handler.handle(q, transport)) as Buffer);
  };
  for (const transport of ['udp', 'tcp'] as const) {
    received.length = 0;
    const r = await ask(true, transport);
    assert.deepEqual(datas(r.answers ?? []), ['192.0.2.1']);
    assert.deepEqual(received, [{ options: [], do: true, size: transport === 'udp' ? 1232 : 4096 }], `${transport}: upstream, the OPT with the DO bit, without the client's cookie`);
    assert.deepEqual(opt(r)?.options ?? [], [], `${transport}: no upstream cookie or keepalive back`);
    assert.equal(opt(r)?.udpPayloadSize, 1232, 'our UDP size, not the upstream\'s');
    assert.ok(((opt(r)?.flags ?? 0) & dnsPacket.DNSSEC_OK) !== 0, 'the DO bit echoed, as the client set it');
  }
  const plain = await ask(false);
  assert.deepEqual(datas(plain.answers ?? []), ['192.0.2.1']);
  assert.equal(opt(plain), undefined, 'no OPT to a client that sent none');
  withOpt = false;
  const added = await ask(true);
  assert.equal(opt(added)?.udpPayloadSize, 1232, 'an upstream without EDNS: ours added, as the client asked with EDNS');
  assert.deepEqual(datas(added.answers ?? []), ['192.0.2.1']);
});

test('an upstream OPT record that is not the last record, or bytes after the last record: the relayed reply still decodes, with our OPT and no upstream option', async (t) => {
  // OPT may sit anywhere in the additional section; a record after it may point (compression)
  // into a later record: cutting bytes out of the middle broke every such pointer
  const wname = (n: string) => Buffer.concat([...n.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)])), Buffer.from([0])]);
  const rr = (owner: Buffer, type: number, cls: number, ttl: number, rdata: Buffer) => {
    const f = Buffer.alloc(10);
    f.writeUInt16BE(type, 0);
    f.writeUInt16BE(cls, 2);
    f.writeUInt32BE(ttl, 4);
    f.writeUInt16BE(rdata.length, 8);
    return Buffer.concat([owner, f, rdata]);
  };
  let shape: 'opt-first' | 'trailing' = 'opt-first';
  const up = await upstream(t, (q) => {
    const question = q.subarray(12, 12 + wname('www.example.org').length + 4);
    const hdr = Buffer.alloc(12);
    q.copy(hdr, 0, 0, 2);
    hdr.writeUInt16BE(0x8180, 2);
    hdr.writeUInt16BE(1, 4);
    hdr.writeUInt16BE(1, 6);
    const ans = rr(Buffer.from([0xc0, 12]), 1, 1, 60, Buffer.from([192, 0, 2, 1]));
    if (shape === 'trailing') {
      hdr.writeUInt16BE(0, 10);
      return Buffer.concat([hdr, question, ans, Buffer.from([0, 0, 0x29, 0x10])]); // stray bytes, no OPT
    }
    hdr.writeUInt16BE(3, 10);
    const cookie = Buffer.concat([Buffer.from([0, 10, 0, 24]), Buffer.alloc(24, 7)]);
    const opt = rr(Buffer.from([0]), 41, 4096, 0, cookie);
    const glue = rr(wname('ns1.example.net'), 1, 1, 60, Buffer.from([198, 51, 100, 1]));
    const at = 12 + question.length + ans.length + opt.length;
    const glue6 = rr(Buffer.from([0xc0 | (at >> 8), at & 0xff]), 28, 1, 60, Buffer.alloc(16, 1));
    return Buffer.concat([hdr, question, ans, opt, glue, glue6]);
  });
  const f = forwarder(t, [up]);
  const zone = new Zone();
  const handler = new DnsHandler({ zone, resolve: (n, ty, l) => resolve(zone, n, ty, OPTS, l), forwarder: f, isSynced: () => true, log: silentLogger() });
  const ask = async (edns: boolean) => {
    const q = buildQuery({ name: 'www.example.org', type: 'A', ...(edns && { ednsUdpSize: 1232 }) });
    return dnsPacket.decode((await handler.handle(q, 'udp')) as Buffer);
  };
  for (const edns of [true, false]) {
    const r = await ask(edns);
    assert.deepEqual(
      (r.additionals ?? []).map((a) => `${a.type} ${a.name}`),
      ['OPT .', 'A ns1.example.net', 'AAAA ns1.example.net'],
      `client EDNS ${edns}: every record decodes, the pointer after the OPT record still finds its name`,
    );
    if (edns) {
      const o = r.additionals![0] as unknown as { options: { code: number; data?: Buffer }[]; udpPayloadSize: number };
      assert.equal(o.udpPayloadSize, 1232);
      assert.ok(o.options.every((x) => x.code !== 10), 'no upstream cookie');
    }
  }
  shape = 'trailing';
  const r = await ask(true);
  assert.deepEqual(datas(r.answers ?? []), ['192.0.2.1']);
  assert.deepEqual((r.additionals ?? []).map((a) => `${a.type} ${(a as { udpPayloadSize?: number }).udpPayloadSize}`), ['OPT 1232'], 'our OPT after the last record, not after the stray bytes');
});

test('a label holding a dot (a DNS-SD instance name) is a name like any other: forwarded as asked outside the zone, NXDOMAIN inside it', async (t) => {
  // it was FORMERR, which dig reads as "no EDNS" and a resolver as a broken server
  const seen: string[][] = [];
  const up = await upstream(t, (q) => {
    // the question's labels as the upstream reads them from the wire
    const labels: string[] = [];
    for (let off = 12; q[off] !== 0; off += q[off]! + 1) labels.push(q.toString('latin1', off + 1, off + 1 + q[off]!));
    seen.push(labels);
    // written by hand: the question as asked (a codec may not keep a dot inside a label), one A
    const qEnd = questionEnd(q);
    const head = Buffer.from(q.subarray(0, qEnd));
    head.writeUInt16BE(0x8180, 2);
    head.writeUInt16BE(1, 6);
    head.writeUInt16BE(0, 10);
    return Buffer.concat([head, Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 44])]);
  });
  const f = forwarder(t, [up]);
  const zone = new Zone();
  const handler = new DnsHandler({ zone, resolve: (n, ty, l) => resolve(zone, n, ty, OPTS, l), forwarder: f, isSynced: () => true, log: silentLogger() });
  const ask = async (labels: string[]) => {
    const name = Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])), Buffer.from([0])]);
    const q = Buffer.concat([Buffer.from([0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]), name, Buffer.from([0, 1, 0, 1])]);
    return dnsPacket.decode((await handler.handle(q, 'udp')) as Buffer) as dnsPacket.DecodedPacket & { rcode: string };
  };
  const printer = await ask(['My.Printer', '_ipp', '_tcp', 'example', 'org']);
  assert.equal(printer.rcode, 'NOERROR');
  assert.deepEqual(datas(printer.answers ?? []), ['192.0.2.44']);
  assert.deepEqual(seen.pop(), ['My.Printer', '_ipp', '_tcp', 'example', 'org'], 'the upstream got the question as the client asked it');
  // one label "x.cluster" under "local": not a name of the cluster zone
  const outside = await ask(['x.cluster', 'local']);
  assert.deepEqual(datas(outside.answers ?? []), ['192.0.2.44']);
  assert.deepEqual(seen.pop(), ['x.cluster', 'local']);
  const inside = await ask(['a.b', 'default', 'svc', 'cluster', 'local']);
  assert.equal(inside.rcode, 'NXDOMAIN');
  assert.equal(inside.flag_aa, true);
  assert.deepEqual((inside.authorities ?? []).map((a) => a.type), ['SOA']);
  assert.equal(seen.length, 0, 'a name under the zone is ours to answer');
});
