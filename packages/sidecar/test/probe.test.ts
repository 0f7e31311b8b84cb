import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startTestDnsServer } from '@kube-dns/testkit';
import { Prober, runProbe } from '../src/index.js';

test('a probe succeeds on a reply with answers, fails on an empty reply and on no server (as in the kubernetes/dns tests)', async (t) => {
  const server = await startTestDnsServer({
    handler: (q) =>
      q.name === 'test.local' ? { answers: [{ name: q.name, type: 'A', ttl: 30, data: '1.2.3.4' }] } : { rcode: 'NOERROR', answers: [] },
  });
  t.after(() => server.close());
  const at = { host: server.host, port: server.port };

  const good = await runProbe({ server: at, name: 'test.local.', type: 'ANY' });
  assert.equal(good.ok, true);
  assert.ok(good.latencyMs > 0);
  assert.deepEqual(server.questions.at(-1), { name: 'test.local', type: 'ANY', class: 'IN', transport: 'udp' });

  const empty = await runProbe({ server: at, name: 'empty.local.', type: 'SRV' });
  assert.deepEqual({ ok: empty.ok, error: empty.error, latencyMs: empty.latencyMs }, { ok: false, error: 'no RRs for domain "empty.local."', latencyMs: 0 });
  assert.equal(server.questions.at(-1)?.type, 'SRV');

  const deadPort = await freePort();
  const dead = await runProbe({ server: { host: '127.0.0.1', port: deadPort }, name: 'test.local.', type: 'A' });
  assert.equal(dead.ok, false);
  assert.equal(dead.error, `udp 127.0.0.1:${deadPort}: connection refused`);
});

test('a server that does not answer fails the probe after the timeout', async (t) => {
  const server = await startTestDnsServer({ handler: () => 'drop' });
  t.after(() => server.close());
  const r = await runProbe({ server: { host: server.host, port: server.port }, name: 'x.local.', type: 'A' }, 200);
  assert.equal(r.ok, false);
  assert.match(r.error ?? '', /no reply from 127\.0\.0\.1:\d+ over udp within 200 ms/);
});

test('a probe interval longer than setTimeout takes (24.8 days) waits, not a tight loop; stop() ends it at once', async (t) => {
  // the flag takes whole seconds without an upper bound; node clamps a longer timer to 1 ms
  const server = await startTestDnsServer({ answerIp: '10.0.0.1' });
  t.after(() => server.close());
  let probes = 0;
  const p = new Prober(
    { label: 'kubedns', server: { host: '127.0.0.1', port: server.port }, serverText: `127.0.0.1:${server.port}`, name: 'kubernetes.default.svc.cluster.local.', intervalMs: 30 * 86_400_000, type: 'A' },
    { onOutcome: () => probes++, random: () => 0 },
  );
  p.start();
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(probes, 1, 'one probe, then a 30-day wait');
  const stopping = Date.now();
  await p.stop();
  assert.ok(Date.now() - stopping < 200, 'stop() cuts the wait short');
});
