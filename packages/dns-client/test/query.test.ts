// The DNS client over real UDP and TCP sockets: what the sidecar's probes, the forwarder and the
// tests rely on, including servers that misbehave.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import dns from 'node:dns';
import { syncBuiltinESMExports } from 'node:module';
import { createServer } from 'node:net';
import * as dnsPacket from 'dns-packet';
import { DnsTimeoutError, buildQuery, datas, exchange, query, rcodeOf } from '@kube-dns/dns-client';
import { aRecord, framed, freePort, response, startRawServer, startTestDnsServer, type RawServerOptions, type TestAnswer, type TestQuestion } from '@kube-dns/testkit';

async function testServer(t: TestContext, handler?: (q: TestQuestion) => TestAnswer) {
  const s = await startTestDnsServer(handler ? { handler } : { answerIp: '192.0.2.1' });
  t.after(() => s.close());
  return s;
}

async function rawServer(t: TestContext, opts: RawServerOptions) {
  const s = await startRawServer(opts);
  t.after(() => s.close());
  return s;
}

/** The rejection of `p`, and how long it took. */
async function failure(p: Promise<unknown>): Promise<{ err: Error & { code?: string }; ms: number }> {
  const started = performance.now();
  try {
    await p;
  } catch (e) {
    return { err: e as Error, ms: performance.now() - started };
  }
  assert.fail('expected the query to fail');
}

test('a query over UDP gets the answer, with the ID it sent', async (t) => {
  const s = await testServer(t);
  const r = await query(s, { name: 'www.example.com', type: 'A', id: 4242 });
  assert.equal(r.transport, 'udp');
  assert.equal(r.packet.id, 4242);
  assert.equal(rcodeOf(r.packet), 'NOERROR');
  assert.deepEqual(datas(r.packet.answers, 'A'), ['192.0.2.1']);
  assert.equal(r.packet.answers?.[0]?.name, 'www.example.com');
  assert.ok(r.rttMs >= 0);
  assert.equal(dnsPacket.decode(r.bytes).id, 4242, 'bytes are the reply as received');
  assert.deepEqual(s.questions, [{ name: 'www.example.com', type: 'A', class: 'IN', transport: 'udp' }]);
});

test('a query over TCP gets the answer and the server sees TCP', async (t) => {
  const s = await testServer(t);
  const r = await query(s, { name: 'tcp.example.com', type: 'A', transport: 'tcp' });
  assert.equal(r.transport, 'tcp');
  assert.deepEqual(datas(r.packet.answers, 'A'), ['192.0.2.1']);
  assert.deepEqual(s.questions, [{ name: 'tcp.example.com', type: 'A', class: 'IN', transport: 'tcp' }]);
});

test('rcode, type and class travel both ways', async (t) => {
  const s = await testServer(t, (q) =>
    q.type === 'TXT' ? { answers: [{ name: q.name, type: 'TXT', class: 'CH', ttl: 0, data: ['150'] }], aa: true } : { rcode: 'NXDOMAIN' },
  );
  const nx = await query(s, { name: 'missing.example', type: 'AAAA', transport: 'tcp' });
  assert.equal(rcodeOf(nx.packet), 'NXDOMAIN');
  const ch = await query(s, { name: 'hits.bind', type: 'TXT', class: 'CH' });
  assert.deepEqual(datas(ch.packet.answers), ['"150"']);
  assert.equal(ch.packet.flag_aa, true);
  assert.deepEqual(s.questions.map((q) => `${q.name} ${q.class} ${q.type} ${q.transport}`), [
    'missing.example IN AAAA tcp',
    'hits.bind CH TXT udp',
  ]);
});

test('EDNS: an OPT record with the payload size (and DO bit) is sent only when asked; RD is on unless turned off', async (t) => {
  const s = await rawServer(t, { udp: (q, reply) => reply(response(q)) });
  await query(s, { name: 'a.example', type: 'A' });
  await query(s, { name: 'b.example', type: 'A', ednsUdpSize: 1232 });
  await query(s, { name: 'c.example', type: 'A', ednsUdpSize: 4096, dnssecOk: true, rd: false });
  const [plain, edns, dnssec] = s.queries.map((b) => dnsPacket.decode(b));
  assert.equal(plain!.additionals?.length ?? 0, 0);
  assert.equal(plain!.flag_rd, true);
  const opt = edns!.additionals?.find((a) => a.type === 'OPT') as dnsPacket.OptAnswer | undefined;
  assert.equal(opt?.udpPayloadSize, 1232);
  assert.equal((opt?.flags ?? 0) & dnsPacket.DNSSEC_OK, 0);
  const opt2 = dnssec!.additionals?.find((a) => a.type === 'OPT') as dnsPacket.OptAnswer | undefined;
  assert.equal(opt2?.udpPayloadSize, 4096);
  assert.equal((opt2?.flags ?? 0) & dnsPacket.DNSSEC_OK, dnsPacket.DNSSEC_OK);
  assert.equal(dnssec!.flag_rd, false);
});

test('no reply over UDP: DnsTimeoutError naming the server and the transport, at the timeout', async (t) => {
  const s = await testServer(t, () => 'drop');
  const { err, ms } = await failure(query(s, { name: 'slow.example', type: 'A', timeoutMs: 300 }));
  assert.ok(err instanceof DnsTimeoutError, String(err));
  assert.equal(err.message, `no reply from 127.0.0.1:${s.port} over udp within 300 ms`);
  assert.ok(ms >= 290 && ms < 2000, `gave up after ${ms} ms`);
});

test('no reply over TCP: DnsTimeoutError naming the server and tcp', async (t) => {
  const s = await testServer(t, () => 'drop');
  const { err } = await failure(query(s, { name: 'slow.example', type: 'A', transport: 'tcp', timeoutMs: 300 }));
  assert.ok(err instanceof DnsTimeoutError, String(err));
  assert.equal(err.message, `no reply from 127.0.0.1:${s.port} over tcp within 300 ms`);
});

test('UDP: a reply with the wrong ID or from another port is ignored; the right one is taken', async (t) => {
  const other = createSocket('udp4');
  await new Promise<void>((r) => other.bind(0, '127.0.0.1', () => r()));
  t.after(() => new Promise<void>((r) => other.close(() => r())));
  const s = await rawServer(t, {
    udp: (q, reply, from) => {
      const id = q.readUInt16BE(0);
      reply(response(q, { id: id ^ 0x5a5a, answers: [aRecord('x.example', '6.6.6.6')] }));
      other.send(response(q, { answers: [aRecord('x.example', '7.7.7.7')] }), from.port, from.address);
      setTimeout(() => reply(response(q, { answers: [aRecord('x.example', '192.0.2.9')] })), 30);
    },
  });
  const r = await query(s, { name: 'x.example', type: 'A', timeoutMs: 2000 });
  assert.deepEqual(datas(r.packet.answers), ['192.0.2.9']);
});

test('a truncated UDP reply is retried over TCP when asked, and returned as is otherwise', async (t) => {
  const big = Array.from({ length: 40 }, (_, i) => aRecord('big.example', `10.0.${i >> 8}.${i & 255}`));
  const s = await rawServer(t, {
    udp: (q, reply) => reply(response(q, { flags: dnsPacket.TRUNCATED_RESPONSE | dnsPacket.RECURSION_DESIRED })),
    tcp: (q, conn) => conn.write(framed(response(q, { answers: big }))),
  });
  const retried = await query(s, { name: 'big.example', type: 'A', retryTcpOnTruncation: true });
  assert.equal(retried.transport, 'tcp');
  assert.equal(retried.packet.answers?.length, 40);

  const asIs = await query(s, { name: 'big.example', type: 'A' });
  assert.equal(asIs.transport, 'udp');
  assert.equal(asIs.packet.flag_tc, true);
  assert.equal(asIs.packet.answers?.length, 0);
});

test('the TCP retry of a truncated UDP reply fits in the same timeout, not a second one', async (t) => {
  // the sidecar reads servers.bind this way: a poll must not take twice its timeout
  const s = await rawServer(t, {
    udp: (q, reply) => setTimeout(() => reply(response(q, { flags: dnsPacket.TRUNCATED_RESPONSE })), 400),
    tcp: () => {},
  });
  const { err, ms } = await failure(query(s, { name: 'tc.example', type: 'A', timeoutMs: 600, retryTcpOnTruncation: true }));
  assert.ok(err instanceof DnsTimeoutError, String(err));
  assert.ok(ms < 900, `gave up after ${ms} ms with a timeout of 600 ms`);
});

test('TCP: a reply split across many chunks is reassembled; a reply with another ID before it is skipped', async (t) => {
  const s = await rawServer(t, {
    tcp: (q, conn) => {
      conn.setNoDelay(true);
      const stray = framed(response(q, { id: q.readUInt16BE(0) ^ 1, answers: [aRecord('split.example', '6.6.6.6')] }));
      const right = framed(response(q, { answers: [aRecord('split.example', '192.0.2.77'), aRecord('split.example', '192.0.2.78')] }));
      const bytes = Buffer.concat([stray, right]);
      // One byte, then the rest of the length, then the body in small pieces, each in its own write.
      const cuts = [1, 2, 5, stray.length - 1, stray.length + 1, stray.length + 7, bytes.length];
      let from = 0;
      const next = (i: number) => {
        if (i >= cuts.length || conn.destroyed) return;
        conn.write(bytes.subarray(from, cuts[i]));
        from = cuts[i]!;
        setTimeout(() => next(i + 1), 5);
      };
      next(0);
    },
  });
  const r = await query(s, { name: 'split.example', type: 'A', transport: 'tcp', timeoutMs: 3000 });
  assert.deepEqual(datas(r.packet.answers), ['192.0.2.77', '192.0.2.78']);
});

test('TCP: connection refused rejects at once, not at the timeout', async () => {
  const port = await freePort();
  const { err } = await failure(query({ host: '127.0.0.1', port }, { name: 'a.example', type: 'A', transport: 'tcp', timeoutMs: 30_000 }));
  assert.ok(!(err instanceof DnsTimeoutError), String(err));
  assert.equal(err.code, 'ECONNREFUSED');
  assert.match(err.message, new RegExp(`127\\.0\\.0\\.1:${port}`));
});

test('UDP: a closed port (ICMP port unreachable) rejects at once, not at the timeout', async () => {
  const port = await freePort();
  const { err } = await failure(query({ host: '127.0.0.1', port }, { name: 'a.example', type: 'A', timeoutMs: 30_000 }));
  assert.ok(!(err instanceof DnsTimeoutError), String(err));
  assert.equal(err.code, 'ECONNREFUSED');
  assert.match(err.message, new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}$`), 'the message names the server');
});

test('UDP to a server given by a name: it is looked up first; a name that does not resolve rejects the query, naming it, and the process goes on', async (t) => {
  // the sidecar probes targets given as host:port; a failed look-up used to throw out of a
  // callback (an unconnected socket's send) and end the process
  const { err } = await failure(query({ host: 'kube-dns.no-such-domain.invalid', port: 53 }, { name: 'a.example', type: 'A', timeoutMs: 3000 }));
  assert.match(err.message, /kube-dns\.no-such-domain\.invalid/);
  // a name that resolves: /etc/hosts gives `localhost`, and the reply comes from its address
  const s = await startTestDnsServer({ host: '127.0.0.1', answerIp: '192.0.2.7' });
  t.after(() => s.close());
  const hosts = await import('node:dns/promises').then((d) => d.lookup('localhost'));
  if (hosts.address !== '127.0.0.1') return t.skip(`localhost is ${hosts.address} here`);
  const r = await query({ host: 'localhost', port: s.port }, { name: 'www.example.com', type: 'A' });
  assert.deepEqual(datas(r.packet.answers, 'A'), ['192.0.2.7']);
});

test('UDP to a server name while the system resolver hangs: the error says the look-up got no answer, not the server', async (t) => {
  // a probe whose target is a name, during a node resolver outage: the operator must not go
  // looking at a DNS server that was never asked. The resolver is faked: a real one cannot be made to hang here.
  const real = dns.promises.lookup;
  dns.promises.lookup = (() => new Promise(() => {})) as unknown as typeof real;
  syncBuiltinESMExports();
  t.after(() => {
    dns.promises.lookup = real;
    syncBuiltinESMExports();
  });
  const { err, ms } = await failure(query({ host: 'kube-dns.hanging.example', port: 53 }, { name: 'a.example', type: 'A', timeoutMs: 300 }));
  assert.ok(err instanceof DnsTimeoutError, String(err));
  assert.equal(err.message, 'cannot look up "kube-dns.hanging.example": no answer within 300 ms');
  assert.ok(ms >= 290 && ms < 2000, `gave up after ${ms} ms`);
});

test('UDP to an empty server name: rejected at once, naming it (it used to loop in microtasks, freezing the process)', async () => {
  const { err, ms } = await failure(query({ host: '', port: 53 }, { name: 'a.example', type: 'A', timeoutMs: 2000 }));
  assert.match(err.message, /cannot look up ""/);
  assert.ok(ms < 1000, `${ms} ms`);
});

test('TCP: a server that closes without replying is an error naming it', async (t) => {
  // resume(): a paused server socket would never see the client's FIN, and close() would wait forever.
  const srv = createServer((c) => c.on('error', () => c.destroy()).resume().end());
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  t.after(() => new Promise<void>((r) => srv.close(() => r())));
  const port = (srv.address() as { port: number }).port;
  const { err } = await failure(query({ host: '127.0.0.1', port }, { name: 'a.example', type: 'A', transport: 'tcp', timeoutMs: 30_000 }));
  assert.equal(err.message, `127.0.0.1:${port} closed the TCP connection without a reply`);
});

test('a garbled reply with the right ID rejects the query instead of throwing elsewhere', async (t) => {
  const s = await rawServer(t, {
    udp: (q, reply) => {
      const garbage = Buffer.alloc(14, 0xff);
      q.copy(garbage, 0, 0, 2);
      reply(garbage);
    },
  });
  await assert.rejects(query(s, { name: 'a.example', type: 'A', timeoutMs: 2000 }));
});

test('exchange returns the raw reply bytes for a prepared message', async (t) => {
  const s = await testServer(t);
  const msg = buildQuery({ name: 'raw.example', type: 'A', id: 7 });
  for (const transport of ['udp', 'tcp'] as const) {
    const bytes = await exchange(s, msg, transport, 2000);
    const p = dnsPacket.decode(bytes);
    assert.equal(p.id, 7);
    assert.deepEqual(datas(p.answers), ['192.0.2.1']);
  }
});
