import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '@kube-dns/config';
import { ServersReloader } from '../src/reload.js';
import { FakeClock, flush } from './fake-clock.js';

const A = 'server=/acme.local/10.0.0.1';
const B = 'server=/acme.local/10.0.0.2';
const C = 'server=/acme.local/10.0.0.3';
const U = 'server=8.8.8.8';

function setup(initial: string[], graceMs = 1000, failing = { writes: false }) {
  const clock = new FakeClock();
  const events: string[] = [];
  let file = [...initial];
  const r = new ServersReloader(initial, {
    write: async (lines) => {
      if (failing.writes) throw new Error('disk full');
      file = [...lines];
      events.push(`write ${lines.join(',')}`);
    },
    signal: () => events.push('HUP'),
    graceMs,
    log: silentLogger(),
    clock,
  });
  return { clock, events, r, file: () => file };
}

test('a replaced server stays listed next to its replacement for the grace period, then goes', async () => {
  const { clock, events, r, file } = setup([A, U]);
  await r.apply([B, U]);
  assert.deepEqual(events, [`write ${A},${U},${B}`, 'HUP']);
  await clock.advance(999);
  assert.deepEqual(file(), [A, U, B], 'old server still listed just before the grace period ends');
  await clock.advance(1);
  assert.deepEqual(events.slice(2), [`write ${B},${U}`, 'HUP']);
  assert.equal(r.transitioning, false);
});

test('changes during a grace period are merged into one transition', async () => {
  const { clock, events, r, file } = setup([A]);
  await r.apply([B]);
  await clock.advance(500);
  await r.apply([C]);
  assert.deepEqual(file(), [A, B, C], 'everything possibly still in use stays listed');
  await clock.advance(999);
  assert.deepEqual(file(), [A, B, C], 'the grace period restarted with the second change');
  await clock.advance(1);
  assert.deepEqual(file(), [C]);
  assert.equal(events.filter((e) => e === 'HUP').length, 3);
});

test('a config flapping faster than the grace period still ends its transition within 4 grace periods', async () => {
  const { clock, r, file } = setup([A]);
  const sets = [[B], [C], [B], [C], [B], [C]];
  for (const s of sets) {
    await r.apply(s);
    await clock.advance(900);
  }
  // 5.4 s have passed: the cap (4 s) forced the removal in between.
  assert.ok(!file().includes(A), 'the original server was removed despite the flapping');
});

test('pure additions apply in one step; an unchanged list is not written; a reordered one is, at once; grace 0 is a plain rewrite', async () => {
  const { clock, events, r } = setup([A]);
  await r.apply([A, B]);
  assert.deepEqual(events, [`write ${A},${B}`, 'HUP']);
  assert.equal(r.transitioning, false);
  await r.apply([A, B]);
  await clock.advance(5000);
  assert.equal(events.length, 2, 'same servers, no reload');
  // upstreamNameservers reordered: with --strict-order dnsmasq asks them in the file's order
  await r.apply([B, A]);
  assert.deepEqual(events.slice(2), [`write ${B},${A}`, 'HUP'], 'the new order, in one step: nothing to drain');
  assert.equal(r.transitioning, false);

  const z = setup([A], 0);
  await z.r.apply([B]);
  assert.deepEqual(z.events, [`write ${B}`, 'HUP']);

  // an addition ahead of the old lines (a stub domain that sorts first): still one step, one
  // SIGHUP (each SIGHUP empties dnsmasq's whole cache)
  const ahead = setup([A]);
  await ahead.r.apply([C, A]);
  await ahead.clock.advance(5000);
  assert.deepEqual(ahead.events, [`write ${C},${A}`, 'HUP']);
  assert.equal(ahead.r.transitioning, false);
});

test('a failed write leaves dnsmasq alone (no signal), and the same change is retried by the next apply', async () => {
  const failing = { writes: true };
  const { events, r } = setup([A], 0, failing);
  await r.apply([B]);
  await flush();
  assert.deepEqual(events, []);
  failing.writes = false;
  await r.apply([B]);
  assert.deepEqual(events, [`write ${B}`, 'HUP']);
});
