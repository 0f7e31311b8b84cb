// NOTIFY against a real BIND secondary (Debian bind9's named) across a kube-dns restart: the
// NOTIFY must come when kube-dns can answer the secondary, not while its first sync with the API
// server is still under way (the secondary's SOA query then gets SERVFAIL, and BIND waits for the
// zone's RETRY, two hours, before it asks again).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { silentLogger } from '@kube-dns/config';
import { clusterIPService, freePort, startFakeApiServer, startNamedSecondary, tempDir } from '@kube-dns/testkit';
import { startKubeDns } from '../src/app.js';
import { parseOptions } from '../src/options.js';
import { eventually } from './integration-helpers.js';

const Z = 'cluster.local';

async function dig(port: number, ...args: string[]): Promise<string> {
  const r = await execa('dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', ...args], { reject: false });
  return r.stdout;
}

test('after a restart whose first sync is slow, the BIND secondary gets the Services changed meanwhile (NOTIFY once synced)', { timeout: 60_000 }, async (t) => {
  const api = await startFakeApiServer();
  const dir = await tempDir('kube-dns-notify-');
  const [dnsPort, namedPort] = [await freePort(), await freePort()];
  const start = () =>
    startKubeDns(
      parseOptions([
        '--dns-bind-address=127.0.0.1',
        `--dns-port=${dnsPort}`,
        '--healthz-bind-address=127.0.0.1',
        '--healthz-port=0',
        `--kubecfg-file=${api.kubeconfigPath}`,
        `--transfer-to=127.0.0.1:${namedPort}`,
      ]),
      { log: silentLogger(), resolvConfPath: '/dev/null' },
    );
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1'], [{ name: 'https', port: 443 }]));
  let dns = await start();
  const named = await startNamedSecondary([Z], dnsPort, namedPort);
  try {
    await eventually(async () => assert.match(await dig(namedPort, `kubernetes.default.svc.${Z}`, 'A', '+short'), /^10\.0\.0\.1$/m), 15_000, 200);
    await dns.stop();
    // while kube-dns is down a Service is added; the new kube-dns lists Services at once but its
    // EndpointSlices only after a few failed lists (the API server is loaded): about 6 s. They
    // change nothing in the zone (no Service gains its first endpoint), so no new serial follows.
    api.upsert('services', clusterIPService('default', 'while-down', ['10.0.0.90']));
    api.faults.failRequests(5, 503, { resource: 'endpointslices', watch: false });
    await new Promise((r) => setTimeout(r, 1100)); // the new serial (the clock at start) is above the old
    dns = await start();
    const took = await eventually(async () => assert.match(await dig(namedPort, `while-down.default.svc.${Z}`, 'A', '+short'), /^10\.0\.0\.90$/m), 20_000, 200).catch((e) => {
      throw new Error(`${String(e)}\nnamed log:\n${named.log()}`);
    });
    t.diagnostic(`the secondary had the new Service ${took} ms after the restart`);
  } finally {
    await named.stop();
    await dns.stop();
    await api.close();
    await dir.cleanup();
  }
});
