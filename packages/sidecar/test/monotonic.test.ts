import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MonotonicTracker, parseServersBind, parseStatValue } from '../src/index.js';

test('export keeps the latest readings as base (as in the kubernetes/dns tests)', () => {
  const t = new MonotonicTracker();
  const names = ['hits', 'misses', 'evictions', 'insertions', 'cachesize'];
  const exported = new Map(names.map((n) => [n, 0]));
  for (const factor of [1, 2, 3]) {
    const readings = [10, 20, 30, 40, 50].map((v) => v * factor);
    names.forEach((n, i) => {
      exported.set(n, exported.get(n)! + t.delta(n, readings[i]!));
      assert.equal(t.base(n), readings[i]);
    });
    assert.deepEqual([...exported.values()], [10, 20, 30, 40, 50].map((v) => v * factor));
  }
});

test('a dnsmasq restart (readings drop) never lowers the counter; growth after it is added', () => {
  const t = new MonotonicTracker();
  let total = 0;
  for (const reading of [100, 150, 3, 10, 200, -1, 5]) total += t.delta('hits', reading);
  // 100 +50 | restart: base 3 | +7 | +190 | negative: base 0 | +5
  assert.equal(total, 352);
});

test('statistic values parse as int64, anything else is an error naming the statistic', () => {
  assert.equal(parseStatValue('hits.bind.', ['1337']), 1337);
  assert.throws(() => parseStatValue('hits.bind.', ['12a']), /hits\.bind\.: "12a" is not an integer/);
  assert.throws(() => parseStatValue('hits.bind.', ['1', '2']), /expected 1 TXT string, got 2/);
});

test('servers.bind strings become per-server counts; duplicates summed, junk skipped', () => {
  assert.deepEqual(parseServersBind(['127.0.0.1#10053 12 1', 'fd00::1#53 3 0', '127.0.0.1#10053 2 2', 'garbage']), [
    { server: '127.0.0.1#10053', queries: 14, failures: 3 },
    { server: 'fd00::1#53', queries: 3, failures: 0 },
  ]);
});
