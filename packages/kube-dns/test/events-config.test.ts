// Kubernetes Events about the kube-dns ConfigMap, from the production wiring (startKubeDns) to
// the testkit's fake API server: what `kubectl get events` shows an operator after an edit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { datas } from '@kube-dns/dns-client';
import { startTestDnsServer, type KubeObject } from '@kube-dns/testkit';
import { editConfig, eventually, startCluster, waitSynced, type Cluster } from './integration-helpers.js';

type Ev = KubeObject & { type: string; reason: string; message: string; count: number; involvedObject: Record<string, string>; source: { component: string } };
const events = (c: Cluster, reason?: string) => (c.api.list('events', 'kube-system') as Ev[]).filter((e) => reason === undefined || e.reason === reason);

async function waitEvent(c: Cluster, reason: string, pred: (e: Ev) => boolean = () => true, ms = 15_000): Promise<Ev> {
  let found: Ev | undefined;
  await eventually(async () => {
    found = events(c, reason).find(pred);
    assert.ok(found, `no ${reason} Event yet; have: ${JSON.stringify(events(c).map((e) => [e.reason, e.count, e.message]))}`);
  }, ms, 50);
  return found!;
}

/**
 * Replaces a ConfigMap key at once, as the kubelet does (it swaps a symlink): a plain writeFile
 * truncates first, and a reload that reads the empty file in between sees the key removed (an
 * extra "defaults" ConfigApplied that once failed this test). Dot files are not keys.
 */
async function replaceKey(dir: string, key: string, content: string): Promise<void> {
  const tmp = join(dir, `.${key}.tmp`);
  await writeFile(tmp, content);
  await rename(tmp, join(dir, key));
}

test('a rejected ConfigMap edit is a Warning InvalidConfig Event on the ConfigMap naming the key and the error; a good one a Normal ConfigApplied', async (t) => {
  const c = await startCluster();
  t.after(() => c.stop());
  await waitSynced(c);
  assert.deepEqual(events(c), [], 'the first load reports nothing');

  await replaceKey(c.configDir, 'upstreamNameservers', '["1.1.1.1", "2.2.2.2", "3.3.3.3", "4.4.4.4"]');
  const bad = await waitEvent(c, 'InvalidConfig');
  assert.equal(bad.type, 'Warning');
  assert.deepEqual(
    { kind: bad.involvedObject['kind'], name: bad.involvedObject['name'], namespace: bad.involvedObject['namespace'] },
    { kind: 'ConfigMap', name: 'kube-dns', namespace: 'kube-system' },
  );
  assert.match(bad.message, /upstreamNameservers: 4 servers given, at most 3 are allowed/);
  assert.equal(bad.source.component, 'kube-dns');
  assert.equal(bad.count, 1);

  await replaceKey(c.configDir, 'upstreamNameservers', '["1.1.1.1"]');
  const ok = await waitEvent(c, 'ConfigApplied');
  assert.equal(ok.type, 'Normal');
  assert.match(ok.message, /applied the ConfigMap \(upstreamNameservers\)/);
  assert.equal(ok.involvedObject['name'], 'kube-dns');

  // the zone keys are named too (they turn zone transfers on, empty services' answers)
  await replaceKey(c.configDir, 'transferTo', '127.0.0.1');
  await replaceKey(c.configDir, 'ignoreEmptyService', 'true');
  await waitEvent(c, 'ConfigApplied', (e) => /\(upstreamNameservers, ignoreEmptyService, transferTo\)/.test(e.message));
});


test('the same mistake made again bumps the count of one Event (PATCH) instead of adding another', async (t) => {
  const c = await startCluster();
  t.after(() => c.stop());
  await waitSynced(c);
  for (let round = 1; round <= 3; round++) {
    await replaceKey(c.configDir, 'stubDomains', '{"acme.local": ["not-an-ip:99999"]}');
    await waitEvent(c, 'InvalidConfig', (e) => e.count === round);
    await replaceKey(c.configDir, 'stubDomains', `{"acme.local": ["10.0.0.${round}"]}`);
    await waitEvent(c, 'ConfigApplied', (e) => e.message.includes('stubDomains') && events(c, 'ConfigApplied').length === round);
  }
  const invalid = events(c, 'InvalidConfig');
  assert.equal(invalid.length, 1, 'one Event for three identical rejections');
  assert.equal(invalid[0]!.count, 3);
  assert.match(invalid[0]!.message, /stubDomains: /);
  assert.equal(c.api.requests.filter((r) => r.method === 'PATCH' && r.path.includes('/events/')).length, 2, 'count bumped with PATCH');
  assert.equal(events(c, 'ConfigApplied').length, 3, 'three different configurations applied: three Events');
});

test('an unreachable API server does not hold up a reload; the Event arrives once the API is back', async (t) => {
  const up = await startTestDnsServer({ answerIp: '192.0.2.44' });
  const c = await startCluster();
  t.after(async () => {
    await c.stop();
    await up.close();
  });
  await waitSynced(c);
  await c.api.faults.pause();
  await editConfig(c, 'upstreamNameservers', JSON.stringify([`127.0.0.1:${up.port}`]));
  // the new upstream answers while the API server is down
  await eventually(async () => {
    const r = await c.ask('www.example.org', 'A', { timeoutMs: 500 });
    assert.deepEqual(datas(r.packet.answers), ['192.0.2.44']);
  }, 5000, 50);
  assert.deepEqual(events(c), []);
  await c.api.faults.resume();
  // sent again after the recorder's backoff (5 s)
  const ev = await waitEvent(c, 'ConfigApplied', () => true, 15_000);
  assert.match(ev.message, /upstreamNameservers/);
});
