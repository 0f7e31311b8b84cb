import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LogLimiter } from '../src/forward/log-limiter.js';

test('a repeated complaint is logged once per interval, saying how many were suppressed', () => {
  let now = 0;
  const limiter = new LogLimiter(10_000, () => now);
  const lines: number[] = [];
  for (let i = 0; i < 1000; i++) {
    limiter.maybe((suppressed) => lines.push(suppressed));
    now += 25; // 1000 events over 25 s
  }
  assert.deepEqual(lines, [0, 399, 399]);
});
