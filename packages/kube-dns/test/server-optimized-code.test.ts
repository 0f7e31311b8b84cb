// The query path keeps its optimized code across a full collection in a quiet spell
// (src/server/wire.ts, lastQuery; src/server/udp.ts, lastRinfo). Before, every full collection
// that found no query alive freed the hidden class of the parsed query, and V8 threw away the
// optimized code of every function that checked for it: the first half second of traffic after a
// quiet spell ran unoptimized. Seen through V8's own account (--trace-opt, --trace-deopt) of the
// running binary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterIPService, startFakeApiServer } from '@kube-dns/testkit';
import { sendQueries, sleep, startTracedKubeDns } from './traced-binary.js';

// Loaded into kube-dns with --require: a full collection on SIGUSR2, as V8's memory reducer or
// kube-dns's heap settler run one when the loop goes quiet, but at the moment the test chooses.
const FULL_GC_ON_SIGNAL = `const gc = require('node:vm').runInNewContext('gc');
process.on('SIGUSR2', () => { gc(); process.stdout.write('\\n=== full collection done\\n'); });`;

/** Our functions on every query's path, as V8's traces name them. */
const QUERY_PATH = ['parseQuery', 'answer', 'isAbsent', 'encodeNegative'];

test('a full collection in a quiet spell does not throw away the query path\'s optimized code', { timeout: 90_000 }, async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  for (let i = 0; i < 100; i++) api.upsert('services', clusterIPService(`ns${i % 20}`, `svc${i}`, [`10.96.0.${i + 1}`]));
  const dir = mkdtempSync(join(tmpdir(), 'kube-dns-optimized-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const preload = join(dir, 'full-gc-on-signal.cjs');
  writeFileSync(preload, FULL_GC_ON_SIGNAL);
  const kd = await startTracedKubeDns(t, api, ['--trace-opt', '--trace-deopt', '--expose-gc', '--require', preload]);
  const optimized = (fn: string) => new RegExp(`\\[completed optimizing \\S+ <JSFunction ${fn} `).test(kd.output());
  // what a cluster sends: names of Services, and search-path expansions that do not exist
  // (NXDOMAIN), each of the latter unique
  await sendQueries(t, kd.dnsPort, 3, { nameOfN: "n % 2 ? 'svc' + (n % 100) + '.ns' + (n % 20) + '.svc.cluster.local' : 'x' + n + '.example.com.ns' + (n % 20) + '.svc.cluster.local'", perBurst: 100, pauseMs: 2 });
  assert.deepEqual(QUERY_PATH.filter((fn) => !optimized(fn)), [], 'the traffic got the query path optimized');

  await sleep(1000); // quiet: no query is alive any more
  kd.process.kill('SIGUSR2');
  for (let i = 0; !kd.output().includes('=== full collection done'); i++) {
    assert.ok(i < 200, 'the full collection did not run');
    await sleep(50);
  }
  // every deoptimization of ours since the start, whether the heap settler's own collection after
  // the traffic or the one above caused it
  const thrownAway = kd
    .output()
    .split('\n')
    .filter((l) => l.includes('reason: weak objects'))
    .map((l) => /<SharedFunctionInfo (\S+)>/.exec(l)?.[1])
    .filter((fn) => fn !== undefined && QUERY_PATH.includes(fn));
  assert.deepEqual(thrownAway, [], 'no function of the query path lost its optimized code to the collection');
});
