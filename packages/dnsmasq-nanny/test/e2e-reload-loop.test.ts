// Live reconfiguration under load: lookups keep flowing through the real dnsmasq while the stub
// domain is moved between servers 20 times. None may be lost, and once a change has settled
// every answer must come from the newly configured server.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import * as dnsPacket from 'dns-packet';
import { startTestDnsServer, type TestDnsServer } from '@kube-dns/testkit';
import { startNanny } from './nanny-harness.js';

interface Lookup {
  sentAt: number;
  ip?: string;
  rcode?: string;
  retried: boolean;
}

/**
 * A stub resolver as glibc and dig behave: one socket, the same query (same ID) sent again
 * after 1 s without an answer, then given up 1 s later.
 */
function lookupWithRetry(port: number, name: string): Promise<Lookup> {
  return new Promise((resolve) => {
    const sock = createSocket('udp4');
    const id = Math.floor(Math.random() * 65536);
    const msg = dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type: 'A', class: 'IN' }] });
    const result: Lookup = { sentAt: Date.now(), retried: false };
    let retryTimer: NodeJS.Timeout | undefined;
    const giveUp = setTimeout(() => finish(), 2000);
    const finish = () => {
      clearTimeout(giveUp);
      clearTimeout(retryTimer);
      sock.close();
      resolve(result);
    };
    sock.on('message', (buf) => {
      try {
        const reply = dnsPacket.decode(buf);
        if (reply.id !== id) return;
        result.rcode = (reply as { rcode?: string }).rcode ?? 'NOERROR';
        const a = (reply.answers ?? []).find((x) => x.type === 'A') as { data: string } | undefined;
        result.ip = a?.data;
        finish();
      } catch {
        /* not a DNS message: keep waiting */
      }
    });
    sock.on('error', () => finish());
    sock.send(msg, port, '127.0.0.1');
    retryTimer = setTimeout(() => {
      result.retried = true;
      sock.send(msg, port, '127.0.0.1');
    }, 1000);
  });
}

test('2,000+ lookups while the stub servers change 20 times: none lost, each change routes to its new server once settled', async (t) => {
  const servers: TestDnsServer[] = [];
  for (let i = 0; i < 3; i++) {
    // A few milliseconds of latency keeps forwards in flight when a reload happens.
    const ip = `10.5.0.${i + 1}`;
    const s = await startTestDnsServer({
      handler: async (q) => {
        await new Promise((r) => setTimeout(r, Math.random() * 6));
        return q.type === 'A' ? { answers: [{ name: q.name, type: 'A', ttl: 60, data: ip }] } : { rcode: 'NXDOMAIN' };
      },
    });
    servers.push(s);
    t.after(() => s.close());
  }
  const ipOf = (i: number) => `10.5.0.${i + 1}`;
  const stubConfig = (i: number) => JSON.stringify({ 'stub.test': [`127.0.0.1:${servers[i]!.port}`] });

  const nanny = await startNanny(t, {
    config: { stubDomains: stubConfig(0) },
    flags: ['-reloadGracePeriod=1s', '-syncInterval=200ms'],
  });

  const lookups: Lookup[] = [];
  let running = true;
  let n = 0;
  const worker = async () => {
    while (running) {
      lookups.push(await lookupWithRetry(nanny.port, `q${n++}.stub.test`));
      await new Promise((r) => setTimeout(r, 15));
    }
  };
  const workers = Array.from({ length: 4 }, worker);
  t.after(() => {
    running = false;
  });

  // [from, to, expected ip]: windows in which the latest change had settled.
  const settled: [number, number, string][] = [];
  let current = 0;
  for (let change = 1; change <= 20; change++) {
    const next = (current + 1 + (change % 2)) % 3;
    const mark = nanny.logs.length;
    await nanny.setKey('stubDomains', stubConfig(next));
    await nanny.waitForLog(
      (l) => {
        const stubLines = Array.isArray(l.servers) ? l.servers.filter((x) => String(x).startsWith('server=/stub.test/')) : [];
        return l.msg === 'dnsmasq servers updated' && stubLines.length === 1 && String(stubLines[0]).endsWith(`#${servers[next]!.port}`);
      },
      10_000,
      mark,
    );
    // The SIGHUP is sent when that line is logged; give dnsmasq a moment to act on it.
    await new Promise((r) => setTimeout(r, 50));
    const from = Date.now();
    const probes = await Promise.all(Array.from({ length: 10 }, (_, i) => lookupWithRetry(nanny.port, `probe${change}-${i}.stub.test`)));
    assert.deepEqual(probes.map((p) => p.ip), Array(10).fill(ipOf(next)), `change ${change}: fresh lookups after settling`);
    await new Promise((r) => setTimeout(r, 200));
    settled.push([from, Date.now(), ipOf(next)]);
    current = next;
  }
  while (lookups.length < 2000) await new Promise((r) => setTimeout(r, 50));
  running = false;
  await Promise.all(workers);

  const lost = lookups.filter((l) => l.ip === undefined);
  assert.equal(lost.length, 0, `${lost.length} of ${lookups.length} lookups got no answer: ${JSON.stringify(lost.slice(0, 5))}`);
  assert.ok(lookups.length >= 2000, `${lookups.length} lookups`);
  for (const [from, to, ip] of settled) {
    const inWindow = lookups.filter((l) => l.sentAt >= from && l.sentAt <= to);
    const wrong = inWindow.filter((l) => l.ip !== ip);
    assert.equal(wrong.length, 0, `after settling on ${ip}: ${wrong.length} answers from elsewhere: ${JSON.stringify(wrong.slice(0, 3))}`);
  }
  assert.equal(nanny.logs.filter((l) => l.msg === 'dnsmasq restarted').length, 0, 'no restart');
  t.diagnostic(`${lookups.length} lookups, ${lookups.filter((l) => l.retried).length} needed the retry`);
});
