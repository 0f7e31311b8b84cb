// Scavenges run on the event loop's thread alone (src/runtime/scavenge.ts): V8's helper threads
// only made each pause wait for a thread the kernel had not scheduled yet. Seen through V8's own
// account of each collection (--trace-gc-nvp): under a flood, no scavenge of the running binary
// gives any of its work to a background thread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterIPService, startFakeApiServer } from '@kube-dns/testkit';
import { sendQueries, startTracedKubeDns } from './traced-binary.js';

test('under a flood, every scavenge runs on the event loop thread alone', { timeout: 90_000 }, async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  for (let i = 0; i < 1000; i++) api.upsert('services', clusterIPService(`ns${i % 20}`, `svc${i}`, [`10.96.${i >> 8}.${i & 255}`]));
  const kd = await startTracedKubeDns(t, api, ['--trace-gc-nvp']);
  const from = kd.output().length; // the collections of loading the bundle came before main() set anything
  // unique names, as fast as the sender can
  await sendQueries(t, kd.dnsPort, 3, { nameOfN: "'x' + n + '.example.com.ns' + (n % 20) + '.svc.cluster.local'", perBurst: 200, pauseMs: 0 });
  const scavenges = kd.output().slice(from).split('\n').filter((l) => / gc=s /.test(l));
  assert.ok(scavenges.length >= 20, `the flood caused scavenges (${scavenges.length})`);
  const helped = scavenges.filter((l) => Number(/ background\.scavenge\.parallel=([\d.]+)/.exec(l)?.[1] ?? NaN) !== 0);
  assert.deepEqual(helped, [], 'no scavenge had work done by a background thread');
});
