// kube-dns's HTTP ports at their edges: before the first sync, with PROMETHEUS_PORT taken by
// another process, and against connections that send nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer } from 'node:net';
import { once } from 'node:events';
import { datas } from '@kube-dns/dns-client';
import { createLogger } from '@kube-dns/config';
import { clusterIPService } from '@kube-dns/testkit';
import { startCluster, waitSynced } from './integration-helpers.js';

test('before the first sync /cache is 503, as /readiness is: not a part of the zone that DNS does not serve', async (t) => {
  // the original registers /cache once synced; a partial listing read as the whole zone
  const c = await startCluster({
    seed: async (api) => {
      api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1']));
      await api.faults.pause();
    },
    kubeSync: { backoff: { initialMs: 50, maxMs: 100 } },
  });
  t.after(() => c.stop());
  const cache = await c.http('/cache');
  assert.equal(cache.status, 503);
  assert.match(cache.body, /^no records yet: waiting for the first sync/);
  assert.equal((await c.http('/readiness')).status, 503);
  await c.api.faults.resume();
  await waitSynced(c);
  const after = await c.http('/cache');
  assert.equal(after.status, 200);
  assert.match(after.body, /kubernetes\.default\.svc\.cluster\.local/);
});

test('PROMETHEUS_PORT taken by another process: kube-dns serves DNS and its healthz port all the same, and says why there are no metrics there', async (t) => {
  // hostNetwork, another exporter on the port: the original's skydns dropped that listen error
  const holder = createServer();
  holder.listen(0, '127.0.0.1');
  await once(holder, 'listening');
  t.after(() => holder.close());
  const taken = (holder.address() as import('node:net').AddressInfo).port;
  const lines: string[] = [];
  const log = createLogger('kube-dns', 2, 'info', (l) => void lines.push(l));
  const c = await startCluster({ seed: (api) => api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1'])), extras: { metricsPort: taken }, log });
  t.after(() => c.stop());
  await waitSynced(c);
  assert.deepEqual(datas((await c.ask('kubernetes.default.svc.cluster.local', 'A')).packet.answers), ['10.0.0.1']);
  assert.equal((await c.http('/metrics')).status, 200, 'the metrics on the healthz port');
  assert.ok(lines.some((l) => l.includes('no metrics HTTP (PROMETHEUS_PORT)') && l.includes('EADDRINUSE')), lines.join(''));
});

test('a connection to the HTTP port that sends nothing is closed once idle', async (t) => {
  const c = await startCluster({ extras: { http: { idleMs: 300 } } });
  t.after(() => c.stop());
  const sock = connect({ host: '127.0.0.1', port: c.dns.httpPort });
  sock.on('error', () => undefined);
  t.after(() => sock.destroy());
  await once(sock, 'connect');
  const started = Date.now();
  const closed = await Promise.race([once(sock, 'close').then(() => Date.now() - started), new Promise<undefined>((r) => setTimeout(() => r(undefined), 3000))]);
  assert.ok(closed !== undefined && closed >= 250, `closed by kube-dns after its idle time (${closed} ms)`);
  assert.equal((await c.http('/healthz')).status, 200);
});
