import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ProbeHealthState, evaluateHealth, healthJson, initialHealth, recordOutcome } from '../src/index.js';

const policy = { threshold: 3, intervalMs: 5000, timeoutMs: 2000 };
const ok = (at: number, latencyMs = 2) => ({ ok: true, latencyMs, at });
const fail = (at: number, error = 'no RRs for domain "x."') => ({ ok: false, latencyMs: 0, error, at });

test('before any probe: 503 "waiting for first probe", as the original', () => {
  assert.deepEqual(evaluateHealth(initialHealth(), policy, 0), { IsOk: false, LatencySeconds: 0, Err: 'waiting for first probe' });
});

test('before the first success a failure is reported as is', () => {
  const s = recordOutcome(initialHealth(), fail(1000, 'udp 127.0.0.1:5999: connection refused'));
  assert.deepEqual(evaluateHealth(s, policy, 1000), { IsOk: false, LatencySeconds: 0, Err: 'udp 127.0.0.1:5999: connection refused' });
});

test('fewer consecutive failures than the threshold keep the check healthy; the threshold fails it', () => {
  let s: ProbeHealthState = recordOutcome(initialHealth(), ok(0, 1.5));
  assert.deepEqual(evaluateHealth(s, policy, 0), { IsOk: true, LatencySeconds: 0.0015, Err: '' });
  s = recordOutcome(s, fail(5000));
  s = recordOutcome(s, fail(10_000));
  assert.deepEqual(evaluateHealth(s, policy, 10_000), { IsOk: true, LatencySeconds: 0.0015, Err: '' });
  s = recordOutcome(s, fail(15_000, 'no reply from 127.0.0.1:53 over udp within 2000 ms'));
  const h = evaluateHealth(s, policy, 15_000);
  assert.equal(h.IsOk, false);
  assert.equal(h.LatencySeconds, 0);
  assert.equal(h.Err, 'the last 3 probes failed (threshold 3); last error: no reply from 127.0.0.1:53 over udp within 2000 ms');
  s = recordOutcome(s, ok(20_000, 3));
  assert.deepEqual(evaluateHealth(s, policy, 20_000), { IsOk: true, LatencySeconds: 0.003, Err: '' });
});

test('threshold 1 behaves as the original: the last probe decides', () => {
  let s = recordOutcome(initialHealth(), ok(0));
  s = recordOutcome(s, fail(1000, 'boom'));
  assert.equal(evaluateHealth(s, { ...policy, threshold: 1 }, 1000).IsOk, false);
});

test('no success for more than 3 rounds and a timeout fails the check and says so', () => {
  const s = recordOutcome(initialHealth(), ok(0));
  assert.equal(evaluateHealth(s, policy, 17_000).IsOk, true);
  assert.deepEqual(evaluateHealth(s, policy, 17_001), {
    IsOk: false,
    LatencySeconds: 0,
    Err: 'no successful probe for 17.001s (more than 3 rounds of 5s and a timeout of 2s)',
  });
  const withFailure = recordOutcome(s, fail(7000, 'boom'));
  assert.match(evaluateHealth(withFailure, policy, 20_000).Err, /^no successful probe for 20s .*; last error: boom$/);
});

test('probes every second with a 2 s timeout: one or two lost packets never fail the check by age', () => {
  const fast = { threshold: 3, intervalMs: 1000, timeoutMs: 2000 };
  // as the prober runs: a success at 0; the probe started at 1 s is lost and fails at 3 s; the next
  // starts then, is lost too and fails at 5 s; the next starts then and succeeds
  let s = recordOutcome(initialHealth(), ok(0));
  for (let t = 0; t <= 3000; t += 100) assert.equal(evaluateHealth(s, fast, t).IsOk, true, `the first loss still pending at ${t} ms`);
  s = recordOutcome(s, fail(3000));
  for (let t = 3000; t <= 5000; t += 100) assert.equal(evaluateHealth(s, fast, t).IsOk, true, `one failure at ${t} ms`);
  s = recordOutcome(s, fail(5000));
  assert.equal(evaluateHealth(s, fast, 5050).IsOk, true, 'two failures, the third probe on its way');
  // a prober that stopped: 503 once 3 rounds of 2 s and a timeout have gone by
  assert.equal(evaluateHealth(s, fast, 8001).IsOk, false);
});

test('the JSON body has the original field names and Go escaping', () => {
  assert.equal(healthJson({ IsOk: true, LatencySeconds: 0.000790271, Err: '' }), '{"IsOk":true,"LatencySeconds":0.000790271,"Err":""}');
  assert.equal(
    healthJson({ IsOk: false, LatencySeconds: 0, Err: 'read udp 127.0.0.1:49113->127.0.0.1:5999: "x" & <y>' }),
    '{"IsOk":false,"LatencySeconds":0,"Err":"read udp 127.0.0.1:49113-\\u003e127.0.0.1:5999: \\"x\\" \\u0026 \\u003cy\\u003e"}',
  );
});
