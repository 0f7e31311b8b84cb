// --max-concurrent-forwards under a random-subdomain flood with an upstream that never answers:
// the flood beyond the cap gets SERVFAIL at once (within --overflow-servfails-per-second, the
// rest dropped), cluster names keep being answered, and the forwards held open never exceed the cap.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { buildQuery } from '@kube-dns/dns-client';
import { clusterIPService, startTestDnsServer } from '@kube-dns/testkit';
import { eventually, startCluster, waitSynced } from './integration-helpers.js';

const metric = (body: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(body)?.[1] ?? NaN);

/**
 * kube-dns with `args`, forwarding to an upstream that never answers, one service (web.default),
 * and a client socket: send(id, name) asks A for name, replies maps id → rcode and arrival time.
 */
async function floodRig(t: TestContext, args: string[], forwardTimeoutMs: number) {
  const silent = await startTestDnsServer({ handler: () => 'drop' });
  t.after(() => silent.close());
  const c = await startCluster({
    args,
    forwardTimeoutMs,
    configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${silent.port}`]) },
    seed: (api) => api.upsert('services', clusterIPService('default', 'web', ['10.0.0.80'])),
  });
  t.after(() => c.stop());
  await waitSynced(c);
  const sock = createSocket('udp4');
  t.after(() => sock.close());
  sock.bind(0, '127.0.0.1');
  await once(sock, 'listening');
  const replies = new Map<number, { rcode: number; at: number }>();
  sock.on('message', (m) => {
    if (m.length >= 12) replies.set(m.readUInt16BE(0), { rcode: m.readUInt16BE(2) & 0xf, at: Date.now() });
  });
  const send = (id: number, name: string): void => {
    const q = buildQuery({ name, type: 'A' });
    q.writeUInt16BE(id, 0);
    sock.send(q, c.server.port, c.server.host);
  };
  return { c, silent, replies, send };
}

test('a flood of unique external names with a silent upstream: SERVFAIL beyond the cap at once, cluster names still answered', async (t) => {
  const CAP = 50;
  const FLOOD = 1500;
  // a reply budget above the flood: every query over the cap is answered (the next test drops);
  // a forward timeout long enough that any reply seen within it can only come from the cap
  const { c, silent, replies, send } = await floodRig(t, [`--max-concurrent-forwards=${CAP}`, '--overflow-servfails-per-second=100000'], 60_000);

  // the flood, in bursts of 100, interleaved with a cluster name every burst (ids 60000+)
  const started = Date.now();
  let clusterAsked = 0;
  let maxInFlight = 0;
  for (let i = 0; i < FLOOD; i += 100) {
    for (let j = i; j < i + 100; j++) send(j + 1, `r${j}-${Math.random().toString(36).slice(2)}.flood.example`);
    send(60_000 + clusterAsked++, 'web.default.svc.cluster.local');
    await new Promise((r) => setTimeout(r, 10));
    const m = await c.http('/metrics');
    maxInFlight = Math.max(maxInFlight, metric(m.body, 'kubedns_forward_in_flight'));
  }
  // everything beyond the cap is answered, SERVFAIL, well before the first forward could time out
  await eventually(async () => {
    const servfails = [...replies].filter(([id, r]) => id <= FLOOD && r.rcode === 2).length;
    assert.ok(servfails >= FLOOD - CAP, `${servfails} of ${FLOOD} flood queries answered SERVFAIL so far`);
  }, 40_000);
  const lastFloodReply = Math.max(...[...replies].filter(([id]) => id <= FLOOD).map(([, r]) => r.at));
  assert.ok(lastFloodReply - started < 40_000, `the flood was answered in ${lastFloodReply - started} ms, before the 60 s forward timeout`);

  // every cluster name asked during the flood was answered from the zone
  await eventually(async () => {
    for (let k = 0; k < clusterAsked; k++) assert.equal(replies.get(60_000 + k)?.rcode, 0, `cluster query ${k} answered NOERROR`);
  }, 10_000);

  // bounded bookkeeping: never more forwards held than the cap, and the upstream saw no more than that
  assert.ok(maxInFlight <= CAP, `in flight peaked at ${maxInFlight}`);
  assert.ok(silent.questions.length <= CAP + 5, `${silent.questions.length} queries reached the silent upstream (cap ${CAP}; +loop probes)`);
  const m = (await c.http('/metrics')).body;
  assert.ok(metric(m, 'kubedns_forward_rejected_total\\{action="servfail"\\}') >= FLOOD - CAP, 'the rejections are counted');
  assert.equal(metric(m, 'kubedns_forward_rejected_total\\{action="dropped"\\}'), 0);
  assert.equal(metric(m, 'kubedns_forward_max_concurrent'), CAP);
  t.diagnostic(`flood of ${FLOOD}: ${FLOOD - CAP}+ SERVFAIL within ${lastFloodReply - started} ms; in flight peaked at ${maxInFlight}`);
});

test('over the cap, a flood gets at most --overflow-servfails-per-second SERVFAILs and the rest no reply; the budget refills', async (t) => {
  const CAP = 20;
  const BUDGET = 100;
  // the forwards stay in flight through the whole test
  const { c, replies, send } = await floodRig(t, [`--max-concurrent-forwards=${CAP}`, `--overflow-servfails-per-second=${BUDGET}`], 10_000);
  const flood = (from: number, n: number): void => {
    for (let j = from; j < from + n; j++) send(j, `d${j}-${Math.random().toString(36).slice(2)}.flood.example`);
  };

  // 1,000 names in one go: CAP forwarded, the reply budget's worth answered, the rest dropped
  const started = performance.now();
  flood(1, 1000);
  send(60_000, 'web.default.svc.cluster.local');
  await eventually(async () => assert.equal(replies.get(60_000)?.rcode, 0, 'a cluster name asked during the flood is answered'), 5000);
  await new Promise((r) => setTimeout(r, 300));
  const within = performance.now() - started;
  const servfails = [...replies].filter(([id, r]) => id <= 1000 && r.rcode === 2).length;
  // a token bucket (server/reply-budget.ts): a tenth of a second's worth at once, then BUDGET a
  // second over however long the flood took
  const most = BUDGET / 10 + Math.ceil((BUDGET * within) / 1000);
  assert.ok(servfails >= BUDGET / 10 && servfails <= most, `${servfails} flood queries answered SERVFAIL (budget ${BUDGET}/s: ${BUDGET / 10} to ${most} in ${Math.round(within)} ms)`);
  const m = (await c.http('/metrics')).body;
  const answered = metric(m, 'kubedns_forward_rejected_total\\{action="servfail"\\}');
  const dropped = metric(m, 'kubedns_forward_rejected_total\\{action="dropped"\\}');
  assert.equal(answered, servfails, 'the SERVFAILs sent are the ones counted');
  assert.equal(answered + dropped, 1000 - CAP, 'every query over the cap is counted, answered or dropped');
  assert.equal(replies.size, servfails + 1, 'nothing else was answered: the forwards wait, the rest got no reply');

  // a moment later the bucket has refilled: a tenth of a second's worth is answered again
  await new Promise((r) => setTimeout(r, 200));
  flood(2001, BUDGET / 10);
  await eventually(async () => assert.equal([...replies].filter(([id, r]) => id > 2000 && r.rcode === 2).length, BUDGET / 10), 5000);
  t.diagnostic(`1000 over a cap of ${CAP} in ${Math.round(within)} ms: ${answered} SERVFAIL, ${dropped} dropped`);
});

test('--max-concurrent-forwards must be a positive integer', async () => {
  const { parseOptions } = await import('../src/options.js');
  assert.throws(() => parseOptions(['--overflow-servfails-per-second=-1']), /--overflow-servfails-per-second=-1: must be 0 or more/);
  assert.equal(parseOptions([]).overflowServfailsPerSecond, 1000);
  assert.throws(() => parseOptions(['--max-concurrent-forwards=0']), /--max-concurrent-forwards=0: must be 1 or more/);
  assert.equal(parseOptions([]).maxConcurrentForwards, 1000);
  assert.equal(parseOptions([]).lameduckMs, 5000);
});
