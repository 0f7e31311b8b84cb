// Forwarding over a few long-lived sockets per upstream (forward/upstream-sockets.ts): replies
// matched by socket, ID and question; ports that keep changing; a refused server fails at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket, type RemoteInfo } from 'node:dgram';
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import * as dnsPacket from 'dns-packet';
import { buildQuery } from '@kube-dns/dns-client';
import { UpstreamSockets } from '../src/forward/upstream-sockets.js';

/** A raw UDP server: `reply(msg, rinfo, send)` decides what goes back. */
async function rawServer(reply: (msg: Buffer, rinfo: RemoteInfo, send: (b: Buffer) => void) => void) {
  // a receive buffer for a burst of hundreds of queries (the default drops part of them)
  const sock = createSocket({ type: 'udp4', recvBufferSize: 4 << 20 });
  sock.on('message', (msg, rinfo) => reply(msg, rinfo, (b) => sock.send(b, rinfo.port, rinfo.address)));
  sock.bind(0, '127.0.0.1');
  await once(sock, 'listening');
  return { port: sock.address().port, close: () => sock.close() };
}

const answerTo = (msg: Buffer, name?: string): Buffer => {
  const q = dnsPacket.decode(msg);
  const asked = q.questions![0]!;
  return dnsPacket.encode({ id: q.id, type: 'response', flags: dnsPacket.RECURSION_DESIRED, questions: [{ ...asked, name: name ?? asked.name }], answers: [{ type: 'A', name: asked.name, data: '192.0.2.7', ttl: 60 }] });
};

test('200 queries at once over 4 sockets at a time, replaced every 25 queries by one on a new port, each with a random ID, each answered', async (t) => {
  const ports = new Set<number>();
  const ids: number[] = [];
  const server = await rawServer((msg, rinfo, send) => {
    ports.add(rinfo.port);
    ids.push(msg.readUInt16BE(0));
    setTimeout(() => send(answerTo(msg)), 20);
  });
  t.after(() => server.close());
  const pool = new UpstreamSockets({ perServer: 4, usesPerSocket: 25 });
  t.after(() => pool.close());
  const replies = await Promise.all(
    Array.from({ length: 200 }, (_, i) => pool.exchange({ host: '127.0.0.1', port: server.port }, buildQuery({ name: `n${i}.example.org`, type: 'A' }), 2000)),
  );
  replies.forEach((r, i) => assert.equal(dnsPacket.decode(r).questions![0]!.name, `n${i}.example.org`, 'each reply is the answer to its own question'));
  assert.equal(ports.size, pool.opened, 'one source port per socket');
  // 4 at first, each replaced after its 25 queries: 8 full ones, and the last few partly used
  // (a socket per query would be 200)
  assert.ok(pool.opened >= 200 / 25 && pool.opened <= 200 / 25 + 4, `${pool.opened} sockets for 200 queries`);
  assert.ok(new Set(ids).size > 190, `IDs are random (${new Set(ids).size} distinct of 200)`);
});

test('a reply with the right ID but another question is ignored; the real one is taken', async (t) => {
  const server = await rawServer((msg, _rinfo, send) => {
    send(answerTo(msg, 'spoofed.example.org'));
    setTimeout(() => send(answerTo(msg)), 30);
  });
  t.after(() => server.close());
  const pool = new UpstreamSockets();
  t.after(() => pool.close());
  const reply = await pool.exchange({ host: '127.0.0.1', port: server.port }, buildQuery({ name: 'Real.Example.org', type: 'A' }), 2000);
  assert.equal(dnsPacket.decode(reply).questions![0]!.name, 'Real.Example.org');
});

test('a refused server fails at once, naming it; a silent one times out', async (t) => {
  const closed = await rawServer(() => undefined);
  const port = closed.port;
  closed.close();
  const pool = new UpstreamSockets();
  t.after(() => pool.close());
  const started = Date.now();
  await assert.rejects(pool.exchange({ host: '127.0.0.1', port }, buildQuery({ name: 'a.example.org', type: 'A' }), 5000), new RegExp(`ECONNREFUSED 127\\.0\\.0\\.1:${port}`));
  assert.ok(Date.now() - started < 2000, 'well before the 5 s timeout');
  const silent = await rawServer(() => undefined);
  t.after(() => silent.close());
  await assert.rejects(pool.exchange({ host: '127.0.0.1', port: silent.port }, buildQuery({ name: 'b.example.org', type: 'A' }), 200), /no reply from 127\.0\.0\.1:\d+ over udp within 200 ms/);
});

test('close() fails every exchange still waiting, on sockets in the pool and on retired ones', async (t) => {
  const silent = await rawServer(() => undefined);
  t.after(() => silent.close());
  // one socket, replaced after 2 queries: the first socket is retired with two exchanges waiting
  const pool = new UpstreamSockets({ perServer: 1, usesPerSocket: 2 });
  const waiting = [0, 1, 2].map((i) => pool.exchange({ host: '127.0.0.1', port: silent.port }, buildQuery({ name: `w${i}.example.org`, type: 'A' }), 60_000));
  pool.close();
  const results = await Promise.allSettled(waiting);
  assert.deepEqual(results.map((r) => r.status === 'rejected' && /forwarding stopped/.test(String(r.reason))), [true, true, true]);
  assert.equal(pool.opened, 2);
});

test('a server the socket cannot be connected to fails at once with the reason, naming it; its socket leaves the pool', async (t) => {
  // connect() to the broadcast address without SO_BROADCAST: EACCES, on Linux, at once (as
  // ENETUNREACH is for an IPv6 upstream on a node without IPv6 routes)
  const pool = new UpstreamSockets({ perServer: 1 });
  t.after(() => pool.close());
  const server = { host: '255.255.255.255', port: 53 };
  for (const name of ['a.example.org', 'b.example.org']) {
    await assert.rejects(pool.exchange(server, buildQuery({ name, type: 'A' }), 5000), (e: Error) => {
      assert.match(e.message, /^connect E[A-Z]+ 255\.255\.255\.255:53/, `the connect error, not a send on an unconnected socket: ${e.message}`);
      return true;
    });
  }
  assert.equal(pool.opened, 2, 'the socket that failed to connect was not used again');
});

test('sockets of servers no longer asked are closed once idle; those of a server still asked stay', async (t) => {
  // the servers asked change with the ConfigMap, a stub server's resolved name, a ClusterIP:
  // a socket pool per server ever asked would hold its file descriptors for the process's life
  const servers = await Promise.all([0, 1, 2, 3, 4].map(() => rawServer((msg, _r, send) => send(answerTo(msg)))));
  t.after(() => servers.forEach((s) => s.close()));
  const fds = () => readdirSync('/proc/self/fd').length;
  const before = fds();
  const pool = new UpstreamSockets({ perServer: 4, idleMs: 400 });
  t.after(() => pool.close());
  const ask = (port: number, i: number) => pool.exchange({ host: '127.0.0.1', port }, buildQuery({ name: `n${i}.example.org`, type: 'A' }), 2000);
  await Promise.all(servers.flatMap((s) => [0, 1, 2, 3].map((i) => ask(s.port, i))));
  assert.equal(pool.openSockets, 20);
  assert.ok(fds() >= before + 20, `${fds() - before} descriptors more`);
  // only the first server is asked from now on
  for (let i = 0; i < 12; i++) {
    await ask(servers[0]!.port, 100 + i);
    await sleep(100);
  }
  assert.ok(pool.openSockets >= 1 && pool.openSockets <= 4, `${pool.openSockets} sockets open: the first server's only`);
  assert.ok(fds() <= before + 4, `${fds() - before} descriptors more`);
  assert.equal((await ask(servers[1]!.port, 200)).length > 12, true, 'a server asked again gets a new socket');
});
