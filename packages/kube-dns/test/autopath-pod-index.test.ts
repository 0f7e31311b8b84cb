// autopath's pod index against a reference model: random sequences of pods added, moved to
// other IPs, sharing IPs (hostNetwork, an IP reused across namespaces), finishing and deleted,
// with every IP's answer compared after each step. The model is the plain definition of the
// answer, computed from every pod each time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PodIpIndex, type PodLookup } from '../src/autopath/pod-index.js';
import type { PodInfo } from '../src/records/types.js';
import { fuzzSeed, podChurnStep, prng } from './fuzz-kit.js';

const NAMESPACES = ['shop', 'bank', 'kube-system'];
const NAMES = ['web-7d9f8c6b5-x2k4q', 'web-7d9f8c6b5-p8mzt', 'api-0', 'api-1', 'proxy'];
const IPS = ['10.244.0.5', '10.244.0.6', '10.244.1.7', '192.168.1.10', 'fd00::5', 'fd00::6'];

/** The answer by definition: over every pod that is not finished. */
function expected(pods: Map<string, PodInfo>, ip: string): PodLookup {
  const holders = [...pods.values()].filter((p) => !p.finished && p.ips.includes(ip));
  if (holders.some((p) => p.hostNetwork)) return { ok: false, reason: 'host_network' };
  const namespaces = new Set(holders.map((p) => p.namespace));
  if (namespaces.size === 0) return { ok: false, reason: 'unknown_pod' };
  if (namespaces.size > 1) return { ok: false, reason: 'ambiguous_pod' };
  return { ok: true, namespace: [...namespaces][0]! };
}

function run(rng: ReturnType<typeof prng>, steps: number): void {
  const ix = new PodIpIndex();
  const model = new Map<string, PodInfo>();
  const log: string[] = [];
  for (let step = 0; step < steps; step++) {
    const step = podChurnStep(rng, { namespaces: NAMESPACES, names: NAMES, ips: IPS, hostNetwork: true }, model, log);
    if ('delete' in step) ix.deletePod(step.delete.namespace, step.delete.name);
    else ix.setPod(step.set);
    const where = () => `after:\n  ${log.slice(-12).join('\n  ')}`;
    for (const ip of IPS) {
      const got = ix.lookup(ip);
      assert.deepEqual(got, expected(model, ip), `${ip} ${where()}`);
      assert.equal(ix.lookup(ip), got, 'a lookup returns a kept answer, not a new object');
    }
    const live = [...model.values()].filter((p) => !p.finished);
    assert.equal(ix.size, live.length, `size ${where()}`);
    // nothing left behind: an entry for exactly the IPs some pod holds
    assert.equal(ix.ipCount, new Set(live.flatMap((p) => p.ips)).size, `IPs indexed ${where()}`);
  }
  // and everything gone leaves an empty index
  for (const p of model.values()) ix.deletePod(p.namespace, p.name);
  assert.equal(ix.size, 0);
  assert.equal(ix.ipCount, 0);
  for (const ip of IPS) assert.deepEqual(ix.lookup(ip), { ok: false, reason: 'unknown_pod' });
}

test('pod index: random adds, moves, shared IPs, finished and deleted pods answer as the reference model', (t) => {
  for (let seed = 1; seed <= 40; seed++) run(prng(seed), 400);
  run(fuzzSeed(t).rng, 2000);
});

test('pod index: a namespace whose last pod went, then came back, answers for its new pods', () => {
  const ix = new PodIpIndex();
  ix.setPod({ namespace: 'ci-1', name: 'job-a', ips: ['10.244.0.5'] });
  ix.setPod({ namespace: 'ci-1', name: 'job-b', ips: ['10.244.0.5'] }); // two pods of one namespace: no ambiguity
  ix.setPod({ namespace: 'kube-system', name: 'proxy', ips: ['10.244.0.5'], hostNetwork: true });
  assert.deepEqual(ix.lookup('10.244.0.5'), { ok: false, reason: 'host_network' });
  ix.deletePod('kube-system', 'proxy');
  assert.deepEqual(ix.lookup('10.244.0.5'), { ok: true, namespace: 'ci-1' });
  ix.deletePod('ci-1', 'job-a');
  ix.deletePod('ci-1', 'job-b');
  assert.deepEqual(ix.lookup('10.244.0.5'), { ok: false, reason: 'unknown_pod' });
  ix.setPod({ namespace: 'ci-1', name: 'job-c', ips: ['10.244.0.6'] });
  ix.setPod({ namespace: 'ci-2', name: 'job-a', ips: ['10.244.0.5'] });
  assert.deepEqual(ix.lookup('10.244.0.6'), { ok: true, namespace: 'ci-1' });
  assert.deepEqual(ix.lookup('10.244.0.5'), { ok: true, namespace: 'ci-2' });
  assert.equal(ix.size, 2);
  assert.equal(ix.ipCount, 2);
});
