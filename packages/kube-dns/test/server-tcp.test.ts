// TCP resources a client can hold, over real sockets: unsent replies (backpressure), queries in
// flight per connection, connections at the cap (the oldest idle one goes), and messages that
// arrive too slowly. The real resolver answers from a real zone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildQuery, query } from '@kube-dns/dns-client';
import { silentLogger } from '@kube-dns/config';
import { startTestDnsServer } from '@kube-dns/testkit';
import { Registry } from 'prom-client';
import { registerTcpMetrics } from '../src/http/metrics.js';
import { TcpListener } from '../src/server/tcp.js';
import { encodeTransfer, transferUnderway } from '../src/transfer/messages.js';
import { clusterIP, ep, headless, slice } from './resolve-fixtures.js';
import { startCluster } from './integration-helpers.js';
import { startStack } from './server-stack.js';

/** A 60 KB reply to `msg` (its ID, QR set): a large forwarded answer. */
const big = (msg: Buffer): Buffer => {
  const b = Buffer.alloc(60_000);
  msg.copy(b, 0, 0, 2);
  b[2] = 0x81;
  return b;
};

const frame = (q: Buffer) => {
  const len = Buffer.alloc(2);
  len.writeUInt16BE(q.length);
  return Buffer.concat([len, q]);
};

async function open(port: number): Promise<Socket> {
  const sock = connect(port, '127.0.0.1');
  sock.on('error', () => undefined);
  await new Promise((r) => sock.once('connect', r));
  return sock;
}

const closed = (sock: Socket, ms: number) =>
  new Promise<boolean>((resolve) => {
    if (sock.destroyed || sock.readyState === 'closed') return resolve(true);
    const timer = setTimeout(() => resolve(false), ms);
    sock.once('close', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });

/** Reads length-prefixed replies from a socket; resolves with their IDs once `n` arrived. */
function readReplies(sock: Socket, n: number, timeoutMs = 20_000): Promise<number[]> {
  const ids: number[] = [];
  let buf = Buffer.alloc(0);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${ids.length} of ${n} replies`)), timeoutMs);
    sock.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        ids.push(buf.readUInt16BE(2));
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
      if (ids.length >= n) {
        clearTimeout(timer);
        resolve(ids);
      }
    });
    sock.resume();
  });
}

test('TCP backpressure: a client that pipelines queries for large answers and never reads is not buffered without bound', async (t) => {
  const s = await startStack();
  t.after(s.stop);
  s.zone.setService(headless('default', 'big'));
  s.zone.setSlice(slice('default', 'big-1', 'big', Array.from({ length: 300 }, (_, i) => ep(`10.9.${i >> 8}.${i & 255}`))));
  const n = 3000;
  const sock = await open(s.server.port);
  sock.pause();
  const frames = Buffer.concat(Array.from({ length: n }, (_, i) => frame(buildQuery({ name: 'big.default.svc.cluster.local', type: 'A', id: i }))));
  sock.write(frames);
  // let the server do all it will do: its buffered replies stop growing
  let last = -1;
  for (let i = 0; i < 50; i++) {
    await sleep(100);
    const b = s.tcp.stats().bufferedBytes;
    if (b === last && b > 0) break;
    last = b;
  }
  const stats = s.tcp.stats();
  assert.ok(stats.bufferedBytes <= 64 * 1024 + 6 * 1024, `${stats.bufferedBytes} reply bytes buffered for a client that does not read`);
  // once the client reads, every query is answered, in order
  const ids = await readReplies(sock, n);
  assert.deepEqual(ids, Array.from({ length: n }, (_, i) => i));
  sock.destroy();
});

test('TCP backpressure holds for forwarded answers too: past the total budget, replies for clients that do not read close them', async (t) => {
  // forwards complete after reading paused: each of the 32 in flight could add a 60 KB answer
  const budget = 1024 * 1024;
  const tcp = new TcpListener({ handle: (msg) => sleep(5).then(() => big(msg)) }, silentLogger(), { maxTotalUnsentBytes: budget });
  t.after(() => tcp.close(100));
  const port = await tcp.listen('127.0.0.1', 0);
  const q = frame(buildQuery({ name: 'big.example.org', type: 'TXT', id: 7 }));
  const hogs = await Promise.all(Array.from({ length: 5 }, () => open(port)));
  for (const h of hogs) {
    h.pause();
    h.write(Buffer.concat(Array.from({ length: 200 }, () => q)));
  }
  let last = -1;
  for (let i = 0; i < 50; i++) {
    await sleep(100);
    const b = tcp.stats().bufferedBytes;
    if (b === last) break;
    last = b;
  }
  const stats = tcp.stats();
  // the budget, plus what each connection may hold under its own limit (64 KiB and a reply)
  assert.ok(stats.bufferedBytes <= budget + 5 * (64 * 1024 + 60_000), `${stats.bufferedBytes} reply bytes buffered for 5 clients that do not read`);
  assert.ok(stats.overflowed >= 1, 'the connections past the limit were closed');
  // and an operator sees it
  const registry = new Registry();
  registerTcpMetrics(registry, tcp);
  const text = await registry.metrics();
  assert.match(text, new RegExp(`^kubedns_tcp_connections_closed_total\\{reason="overflow"\\} ${stats.overflowed}$`, 'm'));
  assert.match(text, /^kubedns_tcp_unsent_bytes \d+$/m);
  for (const h of hogs) h.destroy();
  // a client that reads gets all its answers. In batches of 10 (600 KB): the test's budget is
  // below what one connection may have in flight (32 answers of 60 KB), so a reader that the
  // loaded machine let fall behind could otherwise pass it alone (production's budget is 16 MiB)
  const reader = await open(port);
  let got = 0;
  for (let batch = 0; batch < 10; batch++) {
    const replies = readReplies(reader, 10);
    reader.write(Buffer.concat(Array.from({ length: 10 }, () => q)));
    got += (await replies).length;
    reader.removeAllListeners('data');
  }
  assert.equal(got, 100);
  reader.destroy();
});

test('TCP: a client that reads slowly gets every forwarded answer it pipelined, however far over its own limit', async (t) => {
  const tcp = new TcpListener({ handle: (msg) => sleep(5).then(() => big(msg)) }, silentLogger());
  t.after(() => tcp.close(100));
  const port = await tcp.listen('127.0.0.1', 0);
  const sock = await open(port);
  sock.pause();
  // 18 MB of answers: more than loopback's socket buffers hold, so some wait in ours
  const n = 300;
  sock.write(Buffer.concat(Array.from({ length: n }, (_, i) => frame(buildQuery({ name: 'big.example.org', type: 'TXT', id: i })))));
  await sleep(500);
  assert.ok(tcp.stats().bufferedBytes > 4 * 64 * 1024, `${tcp.stats().bufferedBytes} bytes unsent`);
  // then it reads, a little at a time (a slow link)
  let got = 0;
  let buf = Buffer.alloc(0);
  sock.on('data', (c: Buffer) => {
    buf = Buffer.concat([buf, c]);
    while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
      got++;
      buf = buf.subarray(2 + buf.readUInt16BE(0));
    }
    sock.pause();
    setTimeout(() => sock.resume(), 2);
  });
  sock.resume();
  for (let i = 0; i < 400 && got < n && !sock.destroyed; i++) await sleep(50);
  assert.equal(got, n);
  assert.equal(tcp.stats().overflowed, 0);
  sock.destroy();
});

test('TCP: a zone transfer far over the buffer limit is exempt: it and a forward finishing behind it reach a client that reads late', async (t) => {
  // 1,000 records of 15 KB: more than loopback's socket buffers take, so most of it waits in ours
  const txt = Array.from({ length: 60 }, () => 'x'.repeat(250));
  const records = Array.from({ length: 1000 }, (_, i) => ({ name: `r${i}.cluster.local`, type: 'TXT' as const, ttl: 30, data: txt }));
  const handle = (msg: Buffer) => {
    const id = msg.readUInt16BE(0);
    if (id === 2) return encodeTransfer(id, 'cluster.local', records);
    const reply = Buffer.from(msg);
    reply[2] = 0x81;
    return sleep(200).then(() => reply); // a forward, completing while the transfer is unsent
  };
  const tcp = new TcpListener({ handle }, silentLogger());
  t.after(() => tcp.close(100));
  const port = await tcp.listen('127.0.0.1', 0);
  const sock = await open(port);
  sock.pause();
  sock.write(Buffer.concat([frame(buildQuery({ name: 'example.org', type: 'A', id: 1 })), frame(buildQuery({ name: 'cluster.local', type: 'AXFR', id: 2 }))]));
  await sleep(400);
  assert.ok(tcp.stats().bufferedBytes > 2 * 64 * 1024, `most of the transfer waits unsent (${tcp.stats().bufferedBytes} bytes)`);
  const got = await new Promise<{ ids: Set<number>; records: number }>((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const ids = new Set<number>();
    let records = 0;
    const timer = setTimeout(() => reject(new Error(`${records} records, ids ${[...ids]}`)), 20_000);
    sock.on('data', (c: Buffer) => {
      buf = Buffer.concat([buf, c]);
      while (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
        ids.add(buf.readUInt16BE(2));
        records += buf.readUInt16BE(2 + 6);
        buf = buf.subarray(2 + buf.readUInt16BE(0));
      }
      if (records >= 1000 && ids.has(1)) {
        clearTimeout(timer);
        resolve({ ids, records });
      }
    });
    sock.on('close', () => reject(new Error(`closed after ${records} records, ids ${[...ids]}`)));
    sock.resume();
  });
  assert.deepEqual([...got.ids].sort(), [1, 2]);
  assert.equal(got.records, 1000);
  assert.equal(tcp.stats().overflowed, 0);
  sock.destroy();
});

test('TCP: queries in flight per connection are capped; the rest wait their turn and are all answered', async (t) => {
  let concurrent = 0;
  let maxConcurrent = 0;
  const up = await startTestDnsServer({
    handler: async (q) => {
      concurrent++;
      maxConcurrent = Math.max(maxConcurrent, concurrent);
      await sleep(100);
      concurrent--;
      return { answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.1' }] };
    },
  });
  t.after(() => up.close());
  const s = await startStack({ upstreamPort: up.port, tcp: { maxPipelined: 8 } });
  t.after(s.stop);
  const n = 60;
  const sock = await open(s.server.port);
  const replies = readReplies(sock, n);
  sock.write(Buffer.concat(Array.from({ length: n }, (_, i) => frame(buildQuery({ name: `name${i}.example.org`, type: 'A', id: i })))));
  const ids = await replies;
  assert.deepEqual([...ids].sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i));
  assert.ok(maxConcurrent <= 8, `${maxConcurrent} queries of one connection were upstream at once`);
  assert.ok(maxConcurrent >= 4, `${maxConcurrent}: pipelining still works`);
  sock.destroy();
});

test('TCP: a client that sends its queries and shuts its side (FIN) gets every reply, then the connection ends', async (t) => {
  // RFC 7766 6.2.4: answer what was received, then close. Forwarded names answer 50 ms later,
  // after the FIN; more of them than may be in flight at once, so some wait behind the cap
  const up = await startTestDnsServer({
    handler: async (q) => {
      await sleep(50);
      return { answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.1' }] };
    },
  });
  t.after(() => up.close());
  const s = await startStack({ upstreamPort: up.port, tcp: { maxPipelined: 4 } });
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'web', ['10.0.0.5']));
  const n = 12;
  const sock = connect({ port: s.server.port, host: '127.0.0.1', allowHalfOpen: true });
  sock.on('error', () => undefined);
  await new Promise((r) => sock.once('connect', r));
  const replies = readReplies(sock, n, 10_000);
  const ended = new Promise((r) => sock.once('end', r));
  const names = Array.from({ length: n }, (_, i) => (i % 3 ? `name${i}.example.org` : 'web.default.svc.cluster.local'));
  sock.end(Buffer.concat(names.map((name, i) => frame(buildQuery({ name, type: 'A', id: i })))));
  const ids = await replies;
  assert.deepEqual([...ids].sort((a, b) => a - b), Array.from({ length: n }, (_, i) => i), 'every query answered');
  await ended; // the server ended its side once all were written
  assert.equal(up.questions.length, names.filter((x) => x.endsWith('example.org')).length);
  sock.destroy();
});

test('TCP: at the connection cap the connection idle the longest is closed to admit a new one', async (t) => {
  const s = await startStack({ tcp: { maxConnections: 20 } });
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'web', ['10.0.0.5']));
  const socks: Socket[] = [];
  for (let i = 0; i < 20; i++) socks.push(await open(s.server.port));
  t.after(() => socks.forEach((x) => x.destroy()));
  // the first connection asks something: it is now the most recently active, socks[1] the oldest idle
  const replies = readReplies(socks[0]!, 1);
  socks[0]!.write(frame(buildQuery({ name: 'web.default.svc.cluster.local', type: 'A', id: 7 })));
  assert.deepEqual(await replies, [7]);
  const r = await query(s.server, { name: 'web.default.svc.cluster.local', type: 'A', transport: 'tcp' });
  assert.equal(r.packet.rcode, 'NOERROR');
  assert.equal(await closed(socks[1]!, 3000), true, 'the oldest idle connection was closed');
  assert.equal(await closed(socks[0]!, 200), false, 'the recently active one was kept');
  assert.equal(await closed(socks[2]!, 200), false, 'one eviction per new connection');
  assert.ok(s.tcp.stats().evicted >= 1);
});

test('TCP: listening on IPv4 and IPv6, the connection cap is one for both', async (t) => {
  const tcp = new TcpListener({ handle: () => undefined }, silentLogger(), { maxConnections: 2 });
  t.after(() => tcp.close(100));
  const port = await tcp.listen('127.0.0.1', 0);
  await tcp.listen('::1', port, true);
  const v4 = await open(port);
  const v6 = connect(port, '::1');
  v6.on('error', () => undefined);
  await new Promise((r) => v6.once('connect', r));
  const third = await open(port);
  t.after(() => [v4, v6, third].forEach((s) => s.destroy()));
  assert.ok(await closed(v4, 2000), 'the oldest idle connection, over IPv4, made room for a third');
  assert.equal(tcp.stats().connections, 2);
  assert.equal(tcp.stats().evicted, 1);
});

test('TCP: a well-behaved client is served throughout a flood of 5,000 connections', async (t) => {
  const cap = 400; // small enough that both ends fit a default limit of 1024 open files
  const s = await startStack({ tcp: { maxConnections: cap } });
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'web', ['10.0.0.5']));
  let opened = 0;
  let flooding = true;
  let maxSeen = 0;
  const live = new Set<Socket>();
  t.after(() => live.forEach((x) => x.destroy()));
  let asked = 0;
  // at least 5,000 connections, and on until the well-behaved client has asked 5 times during the
  // flood (on a loaded machine 5,000 connections can come and go within two of its lookups)
  const flood = (async () => {
    while (opened < 5000 || asked < 5) {
      const wave: Promise<void>[] = [];
      for (let i = 0; i < 25; i++, opened++) {
        wave.push(
          new Promise<void>((resolve) => {
            const c = connect(s.server.port, '127.0.0.1');
            live.add(c);
            c.on('error', () => resolve());
            c.on('close', () => {
              live.delete(c);
              c.destroy();
            });
            c.once('connect', () => resolve());
          }),
        );
      }
      await Promise.all(wave);
      maxSeen = Math.max(maxSeen, s.tcp.stats().connections);
    }
    flooding = false;
  })();
  let served = 0;
  let retried = 0;
  const failures: string[] = [];
  const ask = () => query(s.server, { name: 'web.default.svc.cluster.local', type: 'A', transport: 'tcp', timeoutMs: 2000 });
  while (flooding) {
    // a well-behaved client retries once, as stub resolvers do (glibc's attempts:2): its brand-new
    // connection is as young as the flood's, and may be the oldest idle one by the time its first
    // bytes are read when hundreds of connections arrive in between
    asked++;
    let r = await ask().catch((e: Error) => e);
    if (r instanceof Error) {
      retried++;
      r = await ask().catch((e: Error) => e);
    }
    if (r instanceof Error) failures.push(r.message);
    else if (r.packet.rcode === 'NOERROR') served++;
    else failures.push(r.packet.rcode);
  }
  t.diagnostic(`${served} lookups served during the flood, ${retried} needed a retry`);
  await flood;
  // the last connections may still wait in the accept queue
  for (let i = 0; i < 50 && s.tcp.stats().evicted + s.tcp.stats().connections < opened; i++) await sleep(100);
  assert.deepEqual(failures, [], 'every query of the well-behaved client answered during the flood');
  assert.ok(served >= 5, `${served} queries served during the flood of ${opened} connections`);
  assert.ok(maxSeen <= cap, `${maxSeen} connections held (cap ${cap})`);
  assert.ok(s.tcp.stats().evicted >= opened - cap, `${s.tcp.stats().evicted} idle connections evicted of ${opened}`);
});

/**
 * A child process that opens `n` TCP connections at once (as one attacker's burst does) and holds
 * them for `seconds`; prints how many opened. Its own soft limit of open files is raised for them.
 */
function burstFrom(port: number, n: number, seconds: number): Promise<{ opened: number; errors: number }> {
  const holder = `
const net = require('node:net');
const [port, n, seconds] = process.argv.slice(1).map(Number);
let opened = 0, errors = 0;
for (let i = 0; i < n; i++) {
  const s = net.connect(port, '127.0.0.1', () => opened++);
  s.on('error', () => errors++);
}
setTimeout(() => { process.stdout.write(JSON.stringify({ opened, errors })); process.exit(0); }, seconds * 1000);`;
  const p = spawn('bash', ['-c', `ulimit -n ${n + 200} && exec "$@"`, 'burst', process.execPath, '-e', holder, String(port), String(n), String(seconds)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  p.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) =>
    p.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as { opened: number; errors: number }) : reject(new Error(`burst process exited ${code}`)))),
  );
}

test('TCP: a burst of 5,000 connections at once costs a well-behaved client no SYN retransmit', async (t) => {
  // The kernel drops a SYN when the listener's accept queue is full, and the client sends it again
  // only after 1 s, then 3 s: with libuv accepting one connection per turn of the event loop, a
  // queue shorter than the burst turned it into 1 s stalls and lookups lost at a 2 s timeout.
  const s = await startStack({ tcp: { maxConnections: 400 } });
  t.after(s.stop);
  s.zone.setService(clusterIP('default', 'web', ['10.0.0.5']));
  const burst = burstFrom(s.server.port, 5000, 4);
  const lat: number[] = [];
  const failures: string[] = [];
  const pending: Promise<void>[] = [];
  // no retry: one lookup every 5 ms over a new connection, through the burst and its aftermath
  for (const end = Date.now() + 3000; Date.now() < end; ) {
    const t0 = performance.now();
    pending.push(
      query(s.server, { name: 'web.default.svc.cluster.local', type: 'A', transport: 'tcp', timeoutMs: 2500 }).then(
        (r) => void (r.packet.rcode === 'NOERROR' ? lat.push(performance.now() - t0) : failures.push(r.packet.rcode)),
        (e: Error) => void failures.push(e.message),
      ),
    );
    await sleep(5);
  }
  await Promise.all(pending);
  const { opened } = await burst;
  lat.sort((a, b) => a - b);
  t.diagnostic(`${lat.length} lookups, slowest ${lat.at(-1)?.toFixed(0)} ms; the burst opened ${opened} connections`);
  assert.ok(opened >= 4900, `the burst opened ${opened} of 5,000 connections`);
  assert.ok(s.tcp.stats().evicted >= 4000, `${s.tcp.stats().evicted} idle connections evicted`);
  assert.deepEqual(failures, [], 'every lookup answered');
  assert.ok(lat.length >= 100, `${lat.length} lookups`);
  assert.ok(lat.at(-1)! < 1000, `the slowest lookup took ${lat.at(-1)!.toFixed(0)} ms: it waited for a SYN retransmit`);
});

test('TCP: a partial length prefix, half a message, or a message trickled in are cut at the idle timeout', async (t) => {
  const s = await startStack({ tcp: { idleTimeoutMs: 500 } });
  t.after(s.stop);
  const q = frame(buildQuery({ name: 'web.default.svc.cluster.local', type: 'A' }));
  const prefix = await open(s.server.port);
  prefix.write(q.subarray(0, 1));
  const half = await open(s.server.port);
  half.write(q.subarray(0, q.length >> 1));
  const trickle = await open(s.server.port);
  let sent = 0;
  const timer = setInterval(() => {
    if (!trickle.destroyed && sent < q.length) trickle.write(q.subarray(sent, ++sent));
  }, 150);
  t.after(() => clearInterval(timer));
  assert.equal(await closed(prefix, 5000), true, 'a lone length octet is cut');
  assert.equal(await closed(half, 5000), true, 'half a message is cut');
  // the trickle sends a byte every 150 ms, well within the idle timeout, but its message would
  // take seconds: it is cut long before it completes
  assert.equal(await closed(trickle, 4000), true, 'a trickled message is cut');
  assert.ok(sent < q.length, `${sent} of ${q.length} bytes sent before the cut`);
  assert.ok(s.tcp.stats().slowMessages >= 1);
});

test('TCP: AXFRs pipelined while the transfer is being built are taken one at a time: no copy of the zone per question for a client that does not read', async (t) => {
  // 15 MB of records: more than loopback's socket buffers take
  const txt = Array.from({ length: 60 }, () => 'x'.repeat(250));
  const records = Array.from({ length: 1000 }, (_, i) => ({ name: `r${i}.cluster.local`, type: 'TXT' as const, ttl: 30, data: txt }));
  let asked = 0;
  const s = await startStack({
    handler: {
      transfer: {
        // a build under way (transfer/transfer.ts builds between queries): the reply comes later
        answer: async (_query, q) => {
          asked++;
          await sleep(100);
          return encodeTransfer(q.id, 'cluster.local', records);
        },
      },
    },
  });
  t.after(s.stop);
  const sock = await open(s.server.port);
  t.after(() => sock.destroy());
  sock.pause(); // does not read
  sock.write(Buffer.concat(Array.from({ length: 32 }, (_, i) => frame(buildQuery({ name: 'cluster.local', type: 'AXFR', id: 100 + i })))));
  await sleep(1500);
  // before: all 32 accepted at once, each written whole when its build ended (480 MB unsent)
  assert.ok(asked <= 2, `${asked} transfers answered to a client that has read nothing`);
  // it reads: every transfer comes, in turn, whole
  const one = encodeTransfer(1, 'cluster.local', records);
  let perTransfer = 0; // messages in one transfer
  for (let off = 0; off < one.length; off += 2 + one.readUInt16BE(off)) perTransfer++;
  const all = readReplies(sock, 32 * perTransfer, 30_000);
  sock.resume();
  assert.equal((await all).length, 32 * perTransfer, 'every transfer whole');
  assert.equal(asked, 32, 'every question answered once the client reads');
});

test('TCP: a query pipelined in part behind a zone transfer slower than the idle timeout is answered, not cut as slow', async (t) => {
  // reading pauses while a transfer is built; the half of the next query that arrived meanwhile
  // was the client's on time, so the time we did not read is not held against it (RFC 7766 6.2.1)
  const records = [{ name: 'a.cluster.local', type: 'A' as const, ttl: 30, data: '10.0.0.1' }];
  const handle = (msg: Buffer) => {
    const id = msg.readUInt16BE(0);
    if (id === 1) return transferUnderway(sleep(700).then(() => encodeTransfer(id, 'cluster.local', records)));
    const reply = Buffer.from(msg);
    reply[2] = 0x81;
    return reply;
  };
  const tcp = new TcpListener({ handle }, silentLogger(), { idleTimeoutMs: 300 });
  t.after(() => tcp.close(100));
  const sock = await open(await tcp.listen('127.0.0.1', 0));
  t.after(() => sock.destroy());
  const replies = readReplies(sock, 2, 5000);
  const second = frame(buildQuery({ name: 'web.default.svc.cluster.local', type: 'A', id: 2 }));
  sock.write(Buffer.concat([frame(buildQuery({ name: 'cluster.local', type: 'AXFR', id: 1 })), second.subarray(0, 10)]));
  await sleep(50);
  sock.write(second.subarray(10));
  assert.deepEqual(await replies, [1, 2]);
  assert.equal(tcp.stats().slowMessages, 0);
});

test('TCP: a connection waiting for its reply is not idle: a reply slower than the idle timeout still arrives', async (t) => {
  // a zone transfer of a large zone is built between queries (transfer/transfer.ts) and may take
  // longer than the idle timeout; so may a forward to a slow upstream. Neither is the client's silence.
  const upstream = await startTestDnsServer({ handler: async (q) => (await sleep(900), { answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.9' }] }) });
  t.after(() => upstream.close());
  const s = await startStack({ tcp: { idleTimeoutMs: 300 }, upstreamPort: upstream.port });
  t.after(s.stop);
  const sock = await open(s.server.port);
  t.after(() => sock.destroy());
  const replies = readReplies(sock, 1, 5000);
  sock.write(frame(buildQuery({ name: 'slow.example.com', type: 'A', id: 77 })));
  assert.deepEqual(await replies, [77], 'the reply came on the same connection');
  // and with nothing in flight the idle timeout still applies
  assert.equal(await closed(sock, 3000), true, 'closed once idle');
});

test('kubedns_tcp_connections on /metrics follows the connections open', async (t) => {
  const c = await startCluster();
  t.after(() => c.stop());
  const gauge = async () => Number(/^kubedns_tcp_connections (\d+)$/m.exec((await c.http('/metrics')).body)?.[1]);
  const conns = await Promise.all([1, 2, 3].map(() => open(c.server.port)));
  assert.equal(await gauge(), 3);
  assert.match((await c.http('/metrics')).body, /^kubedns_tcp_connections_closed_total\{reason="refused"\} 0$/m);
  for (const s of conns) s.destroy();
  let n = -1;
  for (let i = 0; i < 50 && n !== 0; i++) {
    await sleep(20);
    n = await gauge();
  }
  assert.equal(n, 0);
});
