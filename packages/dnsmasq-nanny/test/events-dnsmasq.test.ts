// Kubernetes Events on the pod when the real nanny's real dnsmasq dies and comes back, sent to
// the testkit's fake API server (over TLS, with the kubeconfig's CA and token).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startFakeApiServer, type FakeApiServer, type KubeObject } from '@kube-dns/testkit';
import { eventually, loopbackDnsmasqArgs, lookupA, startNanny } from './nanny-harness.js';

type Ev = KubeObject & { type: string; reason: string; message: string; count: number; involvedObject: Record<string, string>; source: { component: string; host?: string } };
const POD_ENV = { POD_NAME: 'kube-dns-5f7d-x2v9q', POD_NAMESPACE: 'kube-system', POD_UID: '7c0e-uid', NODE_NAME: 'node-3' };
const podEvents = (api: FakeApiServer, reason: string) => (api.list('events', 'kube-system') as Ev[]).filter((e) => e.reason === reason);

test('dnsmasq killed twice: one Warning DnsmasqExited with count 2 and one Normal DnsmasqRestarted with count 2, on the pod', async (t) => {
  const api = await startFakeApiServer({ tls: true });
  t.after(() => api.close());
  const nanny = await startNanny(t, { flags: [`-kubecfgFile=${api.kubeconfigPath}`], env: POD_ENV, config: { hosts: '192.0.2.5 h.example\n' } });
  for (let round = 1; round <= 2; round++) {
    const pid = nanny.dnsmasqPid()!;
    const mark = nanny.logs.length;
    process.kill(pid, 'SIGKILL');
    await nanny.waitForLog((l) => l.msg === 'dnsmasq restarted', 5000, mark);
    await eventually(async () => (await lookupA(nanny.port, 'h.example', 300)).ips.join() === '192.0.2.5', 5000, 'dnsmasq answers again');
    await eventually(async () => podEvents(api, 'DnsmasqRestarted')[0]?.count === round, 5000, `restart Event ${round}`);
  }
  const exited = podEvents(api, 'DnsmasqExited');
  assert.equal(exited.length, 1, 'aggregated, not repeated');
  assert.equal(exited[0]!.count, 2);
  assert.equal(exited[0]!.type, 'Warning');
  assert.equal(exited[0]!.message, 'dnsmasq was killed by SIGKILL; the nanny restarts it');
  assert.deepEqual(exited[0]!.involvedObject, { kind: 'Pod', apiVersion: 'v1', namespace: 'kube-system', name: POD_ENV.POD_NAME, uid: POD_ENV.POD_UID, fieldPath: 'spec.containers{dnsmasq}' });
  assert.deepEqual(exited[0]!.source, { component: 'dnsmasq-nanny', host: 'node-3' });
  assert.equal(podEvents(api, 'DnsmasqRestarted')[0]!.type, 'Normal');
});

test('a dnsmasq that cannot be kept running: the Warning DnsmasqGaveUp is sent before the nanny exits', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  const nanny = await startNanny(t, {
    flags: [`-kubecfgFile=${api.kubeconfigPath}`],
    env: POD_ENV,
    rawDnsmasqArgs: (port) => [...loopbackDnsmasqArgs(port), '--no-such-option'],
    waitReady: false,
  });
  const { code } = await nanny.exit;
  assert.equal(code, 255);
  const [gaveUp] = podEvents(api, 'DnsmasqGaveUp');
  assert.ok(gaveUp, 'sent before exiting');
  assert.match(gaveUp.message, /dnsmasq failed 5 times within 60 s, giving up/);
  assert.equal(podEvents(api, 'DnsmasqExited')[0]?.count, 5, 'the five exits, aggregated');
});

test('with the API server down, dnsmasq is restarted as fast as ever; without POD_NAME no Event is attempted', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  await api.faults.pause();
  const nanny = await startNanny(t, { flags: [`-kubecfgFile=${api.kubeconfigPath}`], env: POD_ENV, config: { hosts: '192.0.2.5 h.example\n' } });
  const mark = nanny.logs.length;
  process.kill(nanny.dnsmasqPid()!, 'SIGKILL');
  await eventually(async () => (await lookupA(nanny.port, 'h.example', 200)).ips.join() === '192.0.2.5', 1500, 'a new dnsmasq answers within the usual time', 20);
  await nanny.waitForLog((l) => /cannot send a Kubernetes Event/.test(String(l.msg)), 5000, mark);

  await nanny.stop();

  const quiet = await startNanny(t, { flags: [`-kubecfgFile=${api.kubeconfigPath}`], env: { POD_NAME: '' } });
  await api.faults.resume();
  process.kill(quiet.dnsmasqPid()!, 'SIGKILL');
  await quiet.waitForLog((l) => l.msg === 'dnsmasq restarted', 5000);
  assert.ok(!quiet.logs.some((l) => /Kubernetes Event/.test(String(l.msg))));
  assert.deepEqual(api.requests.filter((r) => r.method === 'POST'), [], 'no Event from the pod without a name');
});
