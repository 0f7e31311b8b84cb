// The health check tolerates isolated failures, fails after the threshold, recovers on success.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { freePort, startTestDnsServer } from '@kube-dns/testkit';
import { type RunningSidecar, startSidecar } from '../src/index.js';
import { probe, testOptions } from './fixtures.js';
import { getHealth, scrape, value, waitFor } from './helpers.js';

test('/healthcheck/<label> turns 503 after N consecutive failures and 200 after a success', async (t) => {
  // Queries 2, 4, 5 and 6 get an empty answer (a failed probe); the others an A record.
  const failing = new Set([2, 4, 5, 6]);
  // What /healthcheck said when query n arrived, i.e. after the outcomes of queries 1..n-1.
  const seen = new Map<number, { status: number; body: { IsOk: boolean; Err: string } }>();
  let sidecar: RunningSidecar | undefined;
  let n = 0;
  const server = await startTestDnsServer({
    handler: async (q) => {
      const i = ++n;
      if (sidecar && i <= 9) {
        const h = await getHealth(sidecar.port, 'flip');
        seen.set(i, { status: h.status, body: JSON.parse(h.body) });
      }
      return failing.has(i) ? { answers: [] } : { answers: [{ name: q.name, type: 'A', ttl: 30, data: '10.0.0.1' }] };
    },
  });
  t.after(() => server.close());

  sidecar = await startSidecar(
    testOptions({ dnsmasqPort: await freePort(), probeFailureThreshold: 2, probes: [probe('flip', server.port, 'flip.local', 250, 'A')] }),
    { random: () => 0.5 },
  );
  t.after(() => sidecar!.stop());
  await waitFor('9 probes', async () => seen.has(9));

  const status = (i: number) => seen.get(i)?.status;
  assert.equal(status(2), 200, 'after a success');
  assert.deepEqual([status(3), seen.get(3)?.body.IsOk], [200, true], 'one failure is tolerated');
  assert.equal(status(4), 200);
  assert.equal(status(5), 200, 'one failure after a success again');
  assert.deepEqual(seen.get(6), {
    status: 503,
    body: { IsOk: false, LatencySeconds: 0, Err: 'the last 2 probes failed (threshold 2); last error: no RRs for domain "flip.local."' },
  });
  assert.equal(seen.get(7)?.status, 503);
  assert.match(seen.get(7)!.body.Err, /^the last 3 probes failed/);
  assert.equal(status(8), 200, 'back after a success');
  assert.equal(status(9), 200);

  const { families } = await scrape(sidecar.port);
  assert.equal(value(families, 'kubedns_probe_flip_errors'), 4);
  assert.ok(Number(families.get('kubedns_probe_flip_latency_ms')?.metrics[0]?.count) >= 4);
  assert.equal((await getHealth(sidecar.port, 'flip')).status, 200);
});

test('a step of the wall clock (a VM resumed, NTP stepping) does not fail the check: the age rule runs on the monotonic clock', async (t) => {
  const server = await startTestDnsServer({ handler: async (q) => ({ answers: [{ name: q.name, type: 'A', ttl: 30, data: '10.0.0.1' }] }) });
  t.after(() => server.close());
  // one probe an hour: after the first success, only the age rule can change the answer
  // the wall clock as the process sees it, stepped at will
  const realNow = Date.now;
  let step = 0;
  Date.now = () => realNow() + step;
  t.after(() => (Date.now = realNow));
  const sidecar = await startSidecar(testOptions({ dnsmasqPort: await freePort(), probes: [probe('step', server.port, 'step.local', 3_600_000, 'A')] }), { random: () => 0 });
  t.after(() => sidecar.stop());
  await waitFor('the first success', async () => (await getHealth(sidecar.port, 'step')).status === 200);
  step = 24 * 3_600_000; // a day forward
  assert.equal((await getHealth(sidecar.port, 'step')).status, 200, 'a day forward');
  step = -24 * 3_600_000; // and back
  assert.equal((await getHealth(sidecar.port, 'step')).status, 200, 'a day back');
});
