// --log-queries on the real binary over real UDP and TCP sockets: the JSON lines an operator
// reads on stdout, sampling, the per-second cap, and a stdout nobody reads never holding answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import * as dnsPacket from 'dns-packet';
import { buildQuery, exchange, query } from '@kube-dns/dns-client';
import { clusterIPService, freePort, startFakeApiServer, startTestDnsServer, type FakeApiServer } from '@kube-dns/testkit';

const BIN = fileURLToPath(new URL('../../bin/kube-dns.js', import.meta.url));

interface Line {
  time: string;
  client: string;
  transport: string;
  name: string;
  type: string;
  rcode: string;
  durationMs: number;
  cached: boolean;
}

async function serve(api: FakeApiServer, extra: string[], opts: { readStdout?: boolean } = {}) {
  const [dnsPort, healthzPort] = [await freePort(), await freePort()];
  const p = spawn(
    process.execPath,
    // --lameduck=0s: no 5 s of answering after SIGTERM at every stop (the lameduck has its own tests)
    [BIN, '--dns-bind-address=127.0.0.1', `--dns-port=${dnsPort}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthzPort}`, `--kubecfg-file=${api.kubeconfigPath}`, '--lameduck=0s', ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  if (opts.readStdout !== false) p.stdout.on('data', (d) => (stdout += d));
  p.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((r) => p.on('exit', (code) => r(code)));
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${healthzPort}/readiness`).then((r) => r.ok, () => false);
    if (ok) break;
    if (Date.now() > deadline || p.exitCode !== null) throw new Error(`kube-dns did not become ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    p,
    server: { host: '127.0.0.1', port: dnsPort },
    text: () => stdout,
    lines: () => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line),
    stderr: () => stderr,
    stop: async () => {
      p.kill('SIGTERM');
      await exited;
    },
  };
}

async function cluster() {
  const api = await startFakeApiServer();
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.96.0.1'], [{ name: 'https', port: 443 }]));
  return api;
}

const waitFor = async (fn: () => boolean, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
};

test('--log-queries=1: one JSON line per query with client, name, type, rcode, duration and cached, over UDP and TCP', async (t) => {
  const api = await cluster();
  const upstream = await startTestDnsServer({ answerIp: '192.0.2.80' });
  const kd = await serve(api, ['--log-queries=1', `--nameservers=127.0.0.1:${upstream.port}`]);
  t.after(async () => {
    await kd.stop();
    await Promise.all([api.close(), upstream.close()]);
  });
  await query(kd.server, { name: 'kubernetes.default.svc.cluster.local', type: 'A' });
  await query(kd.server, { name: 'Kubernetes.Default.svc.cluster.local', type: 'A' });
  await query(kd.server, { name: 'nope.default.svc.cluster.local', type: 'AAAA', transport: 'tcp' });
  await query(kd.server, { name: 'www.example.org', type: 'A' });
  assert.ok(await waitFor(() => kd.lines().length >= 4), `four lines, got: ${JSON.stringify(kd.lines())}`);
  const [first, second, tcp, fwd] = kd.lines();
  assert.deepEqual(
    { name: first!.name, type: first!.type, rcode: first!.rcode, transport: first!.transport, cached: first!.cached },
    { name: 'kubernetes.default.svc.cluster.local', type: 'A', rcode: 'NOERROR', transport: 'udp', cached: false },
  );
  assert.match(first!.client, /^127\.0\.0\.1:\d+$/);
  assert.ok(first!.durationMs >= 0 && Number.isFinite(first!.durationMs));
  assert.ok(!Number.isNaN(Date.parse(first!.time)));
  assert.deepEqual([second!.name, second!.cached], ['Kubernetes.Default.svc.cluster.local', true], 'the repeated question came from the response cache');
  assert.deepEqual([tcp!.transport, tcp!.type, tcp!.rcode], ['tcp', 'AAAA', 'NXDOMAIN']);
  assert.match(tcp!.client, /^127\.0\.0\.1:\d+$/);
  assert.deepEqual([fwd!.name, fwd!.rcode, fwd!.cached], ['www.example.org', 'NOERROR', false]);
});

test('the rcode logged is the one answered: a zone transfer\'s (framed: its header further in) and BADVERS (its high bits in the OPT record)', async (t) => {
  const api = await cluster();
  const kd = await serve(api, ['--log-queries=1', '--transfer-to=127.0.0.1']);
  t.after(async () => {
    await kd.stop();
    await api.close();
  });
  // the IDs' low bits are what a misread rcode would show: 3 NXDOMAIN, 4 NOTIMP, 11
  for (const id of [0x1233, 0x1234, 0x123b]) {
    const r = await exchange(kd.server, buildQuery({ name: 'cluster.local', type: 'AXFR', id }), 'tcp', 5000);
    assert.equal(r.readUInt16BE(2) & 0xf, 0, 'the transfer was answered NOERROR');
  }
  const v1 = buildQuery({ name: 'kubernetes.default.svc.cluster.local', type: 'A', ednsUdpSize: 1232 });
  v1.writeUInt8(1, v1.length - 11 + 6); // the OPT record's TTL, byte 2: the EDNS version
  await exchange(kd.server, v1, 'udp', 5000);
  assert.ok(await waitFor(() => kd.lines().length >= 4), kd.stderr());
  assert.deepEqual(kd.lines().map((l) => [l.type, l.rcode]), [['AXFR', 'NOERROR'], ['AXFR', 'NOERROR'], ['AXFR', 'NOERROR'], ['A', 'BADVERS']]);
});

test('an upstream\'s extended rcode relayed (BADCOOKIE, 23: its upper bits in the OPT record) is logged as such, not as RCODE7', async (t) => {
  const upstream = createSocket('udp4');
  upstream.on('message', (m, from) => {
    const d = dnsPacket.decode(m);
    const r = dnsPacket.encode({ type: 'response', id: d.id, flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE, questions: d.questions, additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 1, flags: 0 } as dnsPacket.Answer] });
    r[3] = (r[3]! & 0xf0) | 7; // 23 = 1 << 4 | 7
    upstream.send(r, from.port, from.address);
  });
  await new Promise<void>((r) => upstream.bind(0, '127.0.0.1', () => r()));
  const api = await cluster();
  const kd = await serve(api, ['--log-queries=1', `--nameservers=127.0.0.1:${upstream.address().port}`]);
  t.after(async () => {
    await kd.stop();
    await api.close();
    upstream.close();
  });
  const reply = await exchange(kd.server, buildQuery({ name: 'www.example.org', type: 'A', ednsUdpSize: 1232 }), 'udp', 5000);
  assert.equal(reply[3]! & 0xf, 7, 'relayed as the upstream sent it');
  assert.ok(await waitFor(() => kd.lines().length >= 1), kd.stderr());
  assert.equal(kd.lines()[0]!.rcode, 'BADCOOKIE');
});

test("a name's bytes as dig shows them: non-ASCII and control octets as \\DDD, quotes and newlines never break or forge the line", async (t) => {
  const api = await cluster();
  const kd = await serve(api, ['--log-queries=1']);
  t.after(async () => {
    await kd.stop();
    await api.close();
  });
  /** A query for these labels (bytes as they are) under default.svc.cluster.local, A. */
  const wire = (first: Buffer) => {
    const labels = [first, ...['default', 'svc', 'cluster', 'local'].map((l) => Buffer.from(l))];
    return Buffer.concat([Buffer.from([0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]), ...labels.flatMap((l) => [Buffer.from([l.length]), l]), Buffer.from([0, 0, 1, 0, 1])]);
  };
  const asked = [
    Buffer.from('café'), // UTF-8: c3 a9
    Buffer.from([0x78, 0x0a, 0x7b, 0x22, 0x72, 0x63, 0x6f, 0x64, 0x65, 0x22, 0x7d]), // x\n{"rcode"}
    Buffer.from([0x64, 0x7f, 0xc2, 0x85, 0x20, 0x5c]), // DEL, NEL, space, backslash
    Buffer.from('my.printer'), // a dot inside a label
  ];
  const sock = createSocket('udp4');
  t.after(() => sock.close());
  for (const q of asked) {
    sock.send(wire(q), kd.server.port, kd.server.host);
    await once(sock, 'message');
  }
  assert.ok(await waitFor(() => kd.lines().length >= 4), kd.stderr());
  assert.match(kd.text(), /^[\x20-\x7e\n]+$/, 'printable ASCII lines');
  assert.deepEqual(
    kd.lines().map((l) => [l.name, l.rcode]),
    [
      ['caf\\195\\169.default.svc.cluster.local', 'NXDOMAIN'],
      ['x\\010{"rcode"}.default.svc.cluster.local', 'NXDOMAIN'],
      ['d\\127\\194\\133\\032\\\\.default.svc.cluster.local', 'NXDOMAIN'],
      ['my\\046printer.default.svc.cluster.local', 'NXDOMAIN'],
    ],
  );
});

test('off by default; --log-queries=0.25 logs about a quarter; a bad rate is refused', async (t) => {
  const api = await cluster();
  const off = await serve(api, []);
  const some = await serve(api, ['--log-queries=0.25']);
  t.after(async () => {
    await Promise.all([off.stop(), some.stop()]);
    await api.close();
  });
  for (let i = 0; i < 20; i++) {
    await Promise.all(Array.from({ length: 20 }, () => Promise.all([off, some].map((k) => query(k.server, { name: 'kubernetes.default.svc.cluster.local', type: 'A', timeoutMs: 5000 })))));
  }
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(off.lines().length, 0);
  const n = some.lines().length;
  assert.ok(n >= 50 && n <= 150, `400 queries at 0.25: ${n} lines`);

  const bad = spawn(process.execPath, [BIN, '--log-queries=1.5'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  bad.stderr.on('data', (d) => (err += d));
  const code = await new Promise((r) => bad.on('exit', r));
  assert.equal(code, 2);
  assert.match(err, /--log-queries=1\.5: a share of queries from 0 to 1/);
});

test('a flood is capped at --log-queries-max-rate lines per second, and said so on stderr', async (t) => {
  const api = await cluster();
  const kd = await serve(api, ['--log-queries=1', '--log-queries-max-rate=50']);
  t.after(async () => {
    await kd.stop();
    await api.close();
  });
  const started = Date.now();
  let answered = 0;
  for (let i = 0; i < 50; i++) {
    await Promise.all(Array.from({ length: 20 }, (_, k) => query(kd.server, { name: `n${i}-${k}.default.svc.cluster.local`, type: 'A', timeoutMs: 5000 }).then(() => answered++)));
  }
  const seconds = (Date.now() - started) / 1000;
  assert.equal(answered, 1000);
  await new Promise((r) => setTimeout(r, 300));
  const lines = kd.lines().length;
  assert.ok(lines <= 50 * (Math.ceil(seconds) + 1), `${lines} lines in ${seconds.toFixed(1)} s at 50 per second`);
  assert.ok(lines >= 50, `the first second's 50 lines are there (${lines})`);
  assert.match(kd.stderr(), /query log: sampled queries left out/);
});

test('every query left out by the cap is counted on stderr: a flood that ends, then a stop, loses no count', async (t) => {
  const api = await cluster();
  const kd = await serve(api, ['--log-queries=1', '--log-queries-max-rate=10']);
  t.after(() => api.close());
  let answered = 0;
  for (let i = 0; i < 10; i++) {
    await Promise.all(Array.from({ length: 50 }, (_, k) => query(kd.server, { name: `d${i}-${k}.default.svc.cluster.local`, type: 'A', timeoutMs: 5000 }).then(() => answered++)));
  }
  await kd.stop();
  assert.equal(answered, 500);
  const lines = kd.lines().length;
  const notLogged = kd
    .stderr()
    .split('\n')
    .filter((l) => l.includes('query log: sampled queries left out'))
    .reduce((sum, l) => sum + (JSON.parse(l) as { notLogged: number }).notLogged, 0);
  assert.ok(lines >= 10 && lines < 500, `${lines} lines`);
  assert.equal(lines + notLogged, 500, `${lines} lines written and ${notLogged} said to be left out, of 500 queries`);
});

test('a stdout nobody reads (a stuck log pipe): every query is still answered, and the log resumes once the pipe is read again', async (t) => {
  const api = await cluster();
  const kd = await serve(api, ['--log-queries=1', '--log-queries-max-rate=1000000'], { readStdout: false });
  t.after(async () => {
    kd.p.stdout!.resume();
    await kd.stop();
    await api.close();
  });
  // about 200 bytes a line: 4000 lines are far more than a pipe holds (64 KiB)
  let answered = 0;
  for (let i = 0; i < 200; i++) {
    await Promise.all(
      Array.from({ length: 20 }, (_, k) => query(kd.server, { name: `stuck-${i}-${k}.default.svc.cluster.local`, type: 'A', timeoutMs: 5000 }).then(() => answered++)),
    );
  }
  assert.equal(answered, 4000);
  // node leaves kube-dns's stdout non-blocking: a full pipe is EAGAIN, which must mean "wait",
  // not a broken log turned off for good
  let out = '';
  kd.p.stdout!.on('data', (d) => (out += d));
  for (let k = 0; k < 10; k++) await query(kd.server, { name: `after-${k}.default.svc.cluster.local`, type: 'A', timeoutMs: 5000 });
  assert.ok(await waitFor(() => (out.match(/"name":"after-\d\.default/g) ?? []).length === 10, 15_000), `the lines after the pipe drained: ${(out.match(/"name":"after-\d\.default/g) ?? []).length} of 10\n${kd.stderr()}`);
  assert.doesNotMatch(kd.stderr(), /cannot be written/);
});
