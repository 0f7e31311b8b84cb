// Live reconfiguration under load: 5,000 lookups flow through the real dnsmasq while the stub
// domain is moved between servers 20 times. A lookup counts as lost when its first query got no
// answer within 1 s (a real client would have had to retry): at most 1 in 100 may be, and none
// may fail for good (the README states these figures). Once a change has settled every answer
// must come from the newly configured server.
//
// Where the losses come from: dnsmasq frees the forwards in flight to a server line that a reload
// removes. The nanny keeps the old servers listed for a grace period, but dnsmasq keeps sending
// some new queries to them during it, and those forwarded in the last milliseconds before the
// final reload are dropped.
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

/** README: "at most 1 in 100 lookups needed the client's retry". */
const LOOKUPS = 5000;
const MAX_RETRIED = LOOKUPS / 100;

test('5,000 lookups while the stub servers change 20 times: at most 1 in 100 needs a retry, none fails, each change routes to its new server once settled', async (t) => {
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
    const final = await nanny.waitForLog(
      (l) => {
        const stubLines = Array.isArray(l.servers) ? l.servers.filter((x) => String(x).startsWith('server=/stub.test/')) : [];
        return l.msg === 'dnsmasq servers updated' && stubLines.length === 1 && String(stubLines[0]).endsWith(`#${servers[next]!.port}`);
      },
      10_000,
      mark,
    );
    // That line is logged as the SIGHUP is sent; each reload line is one SIGHUP. Settled means
    // dnsmasq has confirmed all of them, the last included.
    const sighups = nanny.logs.slice(0, nanny.logs.indexOf(final) + 1).filter((l) => /^dnsmasq servers (updated|added)/.test(l.msg)).length;
    await nanny.waitForLog((l) => l.msg === 'dnsmasq applied the reload' && Number(l.reloadsApplied) >= sighups, 10_000, mark);
    const from = Date.now();
    const probes = await Promise.all(Array.from({ length: 10 }, (_, i) => lookupWithRetry(nanny.port, `probe${change}-${i}.stub.test`)));
    assert.deepEqual(probes.map((p) => p.ip), Array(10).fill(ipOf(next)), `change ${change}: fresh lookups after settling`);
    await new Promise((r) => setTimeout(r, 200));
    settled.push([from, Date.now(), ipOf(next)]);
    current = next;
  }
  while (lookups.length < LOOKUPS) await new Promise((r) => setTimeout(r, 50));
  running = false;
  await Promise.all(workers);

  const retried = lookups.filter((l) => l.retried);
  const failed = lookups.filter((l) => l.ip === undefined);
  t.diagnostic(`${lookups.length} lookups over 20 changes: ${retried.length} lost (needed the retry), ${failed.length} failed even after it`);
  assert.ok(lookups.length >= LOOKUPS, `${lookups.length} lookups`);
  assert.equal(failed.length, 0, `${failed.length} of ${lookups.length} lookups got no answer even after a retry: ${JSON.stringify(failed.slice(0, 5))}`);
  assert.ok(retried.length <= MAX_RETRIED, `${retried.length} of ${lookups.length} lookups needed the retry (at most ${MAX_RETRIED} allowed)`);
  for (const [from, to, ip] of settled) {
    const inWindow = lookups.filter((l) => l.sentAt >= from && l.sentAt <= to);
    const wrong = inWindow.filter((l) => l.ip !== ip);
    assert.equal(wrong.length, 0, `after settling on ${ip}: ${wrong.length} answers from elsewhere: ${JSON.stringify(wrong.slice(0, 3))}`);
  }
  assert.equal(nanny.logs.filter((l) => l.msg === 'dnsmasq restarted').length, 0, 'no restart');
});
