// The zone's pod records (--pods=verified) against a reference model: random sequences of pods
// added, moved to other IPs, sharing IPs (hostNetwork pods on a node's IP, an IP reused across
// namespaces), finishing and deleted; after each step every (namespace, IP) the resolver can
// ask about, every namespace's `<ns>.pod.<zone>`, the pod count and the dump are compared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Zone } from '../src/records/zone.js';
import type { PodInfo } from '../src/records/types.js';
import { fuzzSeed, podChurnStep, prng } from './fuzz-kit.js';

const NAMESPACES = ['shop', 'bank', 'kube-system'];
const NAMES = ['web-7d9f8c6b5-x2k4q', 'web-7d9f8c6b5-p8mzt', 'api-0', 'proxy'];
const IPS = ['10.244.0.5', '10.244.0.6', '192.168.1.10', 'fd00::5', 'fd00::6'];

function run(rng: ReturnType<typeof prng>, steps: number): void {
  const z = new Zone();
  const model = new Map<string, PodInfo>();
  const log: string[] = [];
  for (let step = 0; step < steps; step++) {
    const step = podChurnStep(rng, { namespaces: NAMESPACES, names: NAMES, ips: IPS }, model, log);
    if ('delete' in step) z.deletePod(step.delete.namespace, step.delete.name);
    else z.setPod(step.set);
    const where = `after:\n  ${log.slice(-12).join('\n  ')}`;
    const running = [...model.values()].filter((p) => !p.finished);
    for (const ns of NAMESPACES) {
      for (const ip of IPS) {
        const want = running.some((p) => p.namespace === ns && p.ips.includes(ip));
        assert.equal(z.podHasIp(ns, ip), want, `${ns} ${ip} ${where}`);
      }
      const names = running.some((p) => p.namespace === ns && p.ips.length > 0);
      assert.equal(z.hasPodsIn(ns), names, `${ns}.pod ${where}`);
    }
    assert.equal(z.stats().pods, model.size, `pods ${where}`);
    const dumped = [...z.allPods()].map((p) => `${p.namespace}/${p.name} ${p.ips.join(',')}`).sort();
    const want = [...model.values()].map((p) => `${p.namespace}/${p.name} ${p.finished ? '' : p.ips.join(',')}`).sort();
    assert.deepEqual(dumped, want, `dump ${where}`);
  }
}

test('zone pod records: random adds, moves, shared IPs, finished and deleted pods answer as the reference model', (t) => {
  for (let seed = 1; seed <= 40; seed++) run(prng(seed), 300);
  run(fuzzSeed(t).rng, 2000);
});
