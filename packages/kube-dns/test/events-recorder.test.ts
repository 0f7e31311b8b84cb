// The Event recorder both binaries use (packages/config), against the testkit's fake API server
// over real HTTP(S): in-cluster credentials, aggregation, expiry, and an API that never answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { EventRecorder, inClusterEndpoint, kubeconfigEndpoint, silentLogger, type ObjectReference } from '@kube-dns/config';
import { startFakeApiServer, tempDir, type KubeObject } from '@kube-dns/testkit';
import { eventually } from './integration-helpers.js';

const POD: ObjectReference = { kind: 'Pod', apiVersion: 'v1', namespace: 'kube-system', name: 'kube-dns-abc', uid: 'u-1', fieldPath: 'spec.containers{dnsmasq}' };
type Ev = KubeObject & { count: number; reason: string; message: string; type: string; reportingInstance: string; source: { host?: string } };

test("in a pod: the service account's token and CA reach the API server over TLS, and Events carry the reporter", async (t) => {
  const api = await startFakeApiServer({ tls: true });
  const root = await tempDir('sa-');
  t.after(async () => {
    await api.close();
    await root.cleanup();
  });
  const sa = join(root.path, 'var/run/secrets/kubernetes.io/serviceaccount');
  await mkdir(sa, { recursive: true });
  await writeFile(join(sa, 'token'), `${api.token}\n`);
  const ca = Buffer.from(JSON.parse(await import('node:fs/promises').then((f) => f.readFile(api.kubeconfigPath, 'utf8'))).clusters[0].cluster['certificate-authority-data'], 'base64');
  await writeFile(join(sa, 'ca.crt'), ca);
  const endpoint = inClusterEndpoint({ KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(api.port) }, root.path);
  assert.ok(endpoint);
  const rec = new EventRecorder({ component: 'dnsmasq-nanny', host: 'node-1', instance: 'kube-dns-abc', log: silentLogger(), endpoint: () => endpoint });
  rec.emit(POD, 'Warning', 'DnsmasqExited', 'dnsmasq was killed by SIGKILL; the nanny restarts it');
  await rec.flush(5000);
  const [ev] = api.list('events', 'kube-system') as Ev[];
  assert.ok(ev, 'the Event was created');
  assert.deepEqual(ev.involvedObject, POD);
  assert.equal(ev.type, 'Warning');
  assert.equal(ev.source.host, 'node-1');
  assert.equal(ev.reportingInstance, 'kube-dns-abc');
  assert.equal(api.requests.filter((r) => r.status === 401).length, 0, 'authenticated with the token');
});

test('identical Events aggregate into one with a count; an expired one is created again; different ones stay apart', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  const rec = new EventRecorder({ component: 'kube-dns', log: silentLogger(), endpoint: () => kubeconfigEndpoint(api.kubeconfigPath) });
  for (let i = 0; i < 5; i++) rec.emit(POD, 'Warning', 'DnsmasqExited', 'dnsmasq exited with status 1; the nanny restarts it');
  rec.emit(POD, 'Normal', 'DnsmasqRestarted', 'dnsmasq restarted');
  await rec.flush(5000);
  let list = api.list('events', 'kube-system') as Ev[];
  assert.deepEqual(list.map((e) => [e.reason, e.count]).sort(), [['DnsmasqExited', 5], ['DnsmasqRestarted', 1]]);
  assert.ok(api.requests.filter((r) => r.method === 'POST').length + api.requests.filter((r) => r.method === 'PATCH').length <= 6, 'no request per repeat beyond one in flight');

  // the API server dropped it (Events expire): the next repeat creates it anew, with the full count
  const exited = list.find((e) => e.reason === 'DnsmasqExited')!;
  api.remove('events', 'kube-system', exited.metadata!.name!);
  rec.emit(POD, 'Warning', 'DnsmasqExited', 'dnsmasq exited with status 1; the nanny restarts it');
  await rec.flush(5000);
  list = api.list('events', 'kube-system') as Ev[];
  const again = list.find((e) => e.reason === 'DnsmasqExited')!;
  assert.notEqual(again.metadata!.name, exited.metadata!.name);
  assert.equal(again.count, 6);
});

test('an API server that accepts connections and never answers: emit returns at once, and the recorder gives up on the request', async (t) => {
  const held: Socket[] = [];
  const blackhole = createServer((s) => held.push(s));
  await new Promise<void>((r) => blackhole.listen(0, '127.0.0.1', r));
  t.after(() => {
    for (const s of held) s.destroy();
    blackhole.close();
  });
  const port = (blackhole.address() as { port: number }).port;
  const rec = new EventRecorder({
    component: 'kube-dns',
    log: silentLogger(),
    timeoutMs: 300,
    endpoint: () => ({ server: `http://127.0.0.1:${port}`, options: () => ({}) }),
  });
  t.after(() => rec.close());
  for (let i = 0; i < 100; i++) rec.emit(POD, 'Warning', 'InvalidConfig', `edit ${i % 3}`);
  // three distinct Events, one request at a time, each abandoned after its timeout
  await eventually(async () => assert.equal(rec.requests, 3), 5000, 20);
  assert.ok(held.length >= 1);
});

test('an Event given up during a long outage does not doom its next occurrence: that one is retried and arrives', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  const endpoint = await kubeconfigEndpoint(api.kubeconfigPath);
  // the production 5 s / 10 min, scaled down
  const rec = new EventRecorder({ component: 'dnsmasq-nanny', log: silentLogger(), retryDelayMs: 50, giveUpMs: 300, endpoint: () => endpoint });
  t.after(() => rec.close());
  await api.faults.pause();
  rec.emit(POD, 'Warning', 'DnsmasqExited', 'dnsmasq exited with status 1; the nanny restarts it');
  await new Promise((r) => setTimeout(r, 700)); // the first occurrence is given up
  rec.emit(POD, 'Warning', 'DnsmasqExited', 'dnsmasq exited with status 1; the nanny restarts it');
  await new Promise((r) => setTimeout(r, 100));
  await api.faults.resume();
  await eventually(async () => {
    const [ev] = api.list('events', 'kube-system') as Ev[];
    assert.equal(ev?.count, 2, 'the second crash reaches the API server once it is back');
  }, 5000, 50);
});
