// The reply budget of malformed queries and of queries over the forward cap (server/reply-budget.ts):
// a token bucket, at most a tenth of a second's worth at once, then the rate.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplyBudget } from '../src/server/reply-budget.js';

const takeMany = (b: ReplyBudget, n: number, at: number): number => Array.from({ length: n }, () => b.take(at)).filter(Boolean).length;

test('a burst gets a tenth of a second of the rate, and the bucket refills at the rate', () => {
  const b = new ReplyBudget(1000);
  assert.equal(takeMany(b, 5000, 0), 100, 'the first burst: 100 of 5,000');
  assert.equal(takeMany(b, 5000, 10), 10, '10 ms later: 10 more');
  assert.equal(takeMany(b, 5000, 1000), 100, 'a second later: never more than the bucket holds');
  assert.deepEqual([b.replied, b.dropped], [210, 15_000 - 210]);
});

test('over any stretch of a steady flood, replies stay within the burst plus the rate', () => {
  const b = new ReplyBudget(1000);
  let answered = 0;
  // 20,000 queries a second for 3 s, one every 50 µs
  for (let i = 0; i < 60_000; i++) if (b.take(i * 0.05)) answered++;
  assert.ok(answered >= 2999 && answered <= 100 + 3000, `${answered} answered over 3 s at 1,000/s`);
});

test('small and zero budgets', () => {
  const one = new ReplyBudget(5);
  assert.equal(takeMany(one, 10, 0), 1, 'at least one token when full');
  assert.equal(takeMany(one, 10, 100), 0, 'a fifth of a second per token');
  assert.equal(takeMany(one, 10, 200), 1);
  const none = new ReplyBudget(0);
  assert.equal(takeMany(none, 10, 0) + takeMany(none, 10, 5000), 0, '0: everything dropped');
  assert.equal(none.dropped, 20);
});
