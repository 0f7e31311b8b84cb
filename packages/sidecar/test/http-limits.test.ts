// The sidecar's HTTP port against silent connections: the kubelet asks kubedns's and dnsmasq's
// liveness through it, and 17,000 silent connections from any pod took it past its heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { once } from 'node:events';
import { freePort } from '@kube-dns/testkit';
import { startSidecar } from '../src/index.js';
import { testOptions } from './fixtures.js';
import { scrape } from './helpers.js';

test('a connection to the sidecar that sends nothing is closed once idle', async (t) => {
  const sidecar = await startSidecar(testOptions({ dnsmasqPort: await freePort() }), { http: { idleMs: 300 } });
  t.after(() => sidecar.stop());
  const sock = connect({ host: '127.0.0.1', port: sidecar.port });
  sock.on('error', () => undefined);
  t.after(() => sock.destroy());
  await once(sock, 'connect');
  const started = Date.now();
  const closed = await Promise.race([once(sock, 'close').then(() => Date.now() - started), new Promise<undefined>((r) => setTimeout(() => r(undefined), 3000))]);
  assert.ok(closed !== undefined && closed >= 250, `closed by the sidecar after its idle time (${closed} ms)`);
  assert.ok((await scrape(sidecar.port)).text.includes('kubedns_dnsmasq'), 'and it serves on');
});
