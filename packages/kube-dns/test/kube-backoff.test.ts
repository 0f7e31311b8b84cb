import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff } from '../src/kube/index.js';

test('backoff doubles from 200 ms to a 30 s ceiling, and reset starts over', () => {
  const b = new Backoff({}, () => 0);
  const schedule = Array.from({ length: 11 }, () => b.next());
  assert.deepEqual(schedule, [200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000, 30000]);
  b.reset();
  assert.equal(b.next(), 200);
});

test('jitter shortens each delay by up to 20 %, never lengthens it', () => {
  let r = 0.999;
  const b = new Backoff({}, () => r);
  assert.equal(b.next(), 160);
  assert.equal(b.next(), 320);
  r = 0.5;
  assert.equal(b.next(), 720);
  for (let i = 0; i < 40; i++) b.next(); // a long outage: no overflow, still capped
  r = 0;
  assert.equal(b.next(), 30000);
});

test('custom schedule', () => {
  const b = new Backoff({ initialMs: 50, maxMs: 300, factor: 3, jitter: 0 }, Math.random);
  assert.deepEqual([b.next(), b.next(), b.next(), b.next()], [50, 150, 300, 300]);
});
