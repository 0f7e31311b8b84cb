// NOTIFY against a real BIND secondary (Debian bind9's named). Across a kube-dns restart: the
// NOTIFY must come when kube-dns can answer the secondary, not while its first sync with the API
// server is still under way (the secondary's SOA query then gets SERVFAIL, and BIND waits for the
// zone's RETRY, two hours, before it asks again). And a secondary that serves only some of the
// zones (NOTAUTH for the others) is one warning, not one per change.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { createLogger, silentLogger } from '@kube-dns/config';
import { clusterIPService, freePort, startFakeApiServer, startNamedSecondary, tempDir } from '@kube-dns/testkit';
import { startKubeDns } from '../src/app.js';
import { parseOptions } from '../src/options.js';
import { eventually, startCluster, waitSynced } from './integration-helpers.js';

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

test('a secondary of the cluster zone only: NOTIFY of the external zone refused (NOTAUTH) is logged once, not with every change', { timeout: 60_000 }, async () => {
  const lines: { level: number; msg: string; zone?: string }[] = [];
  const log = createLogger('kube-dns', 2, 'info', (line) => void lines.push(JSON.parse(line)));
  const namedPort = await freePort();
  const c = await startCluster({ log, args: [`--transfer-to=127.0.0.1:${namedPort}`, '--external-zone=example.com'], seed: (api) => api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1'])) });
  const named = await startNamedSecondary([Z], c.dns.dnsPort, namedPort);
  try {
    await waitSynced(c);
    await eventually(async () => assert.match(await dig(namedPort, `kubernetes.default.svc.${Z}`, 'A', '+short'), /^10\.0\.0\.1$/m), 15_000, 100);
    for (let i = 0; i < 4; i++) {
      // each change a new serial (they move at most once a second), a NOTIFY for both zones
      c.api.upsert('services', clusterIPService('default', `s${i}`, [`10.0.0.${10 + i}`]));
      await new Promise((r) => setTimeout(r, 1500));
    }
    await eventually(async () => assert.match(await dig(namedPort, `s3.default.svc.${Z}`, 'A', '+short'), /^10\.0\.0\.13$/m), 15_000, 100);
    // named refused the external zone's NOTIFY with every change
    const notAuth = () => named.log().split('\n').filter((l) => /received notify for zone 'example.com': not authoritative/.test(l)).length;
    await eventually(async () => assert.ok(notAuth() >= 3, named.log()), 10_000, 100);
    await new Promise((r) => setTimeout(r, 300)); // its answers taken
    const refused = lines.filter((l) => /NOTIFY refused/.test(l.msg));
    assert.ok(refused.every((l) => l.zone === 'example.com'), JSON.stringify(refused));
    assert.equal(refused.length, 1, `one warning for the zone it does not serve: ${JSON.stringify(refused)}`);
  } finally {
    await named.stop();
    await c.stop();
  }
});

test('secondaries given as a range (no NOTIFY): the SOA a UDP query gets moves within seconds of a change, even when the old serial was cached', { timeout: 30_000 }, async () => {
  const c = await startCluster({ args: ['--transfer-to=127.0.0.0/8'], seed: (api) => api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1'])) });
  const serial = async () => ((await c.ask('cluster.local', 'SOA')).packet.answers![0] as unknown as { data: { serial: number } }).data.serial;
  try {
    await waitSynced(c);
    const s0 = await serial();
    c.api.upsert('services', clusterIPService('default', 'a1', ['10.0.0.61']));
    let s1 = s0;
    await eventually(async () => assert.notEqual((s1 = await serial()), s0), 5_000, 100);
    // a change just after the serial moved waits for the next one, and meanwhile the answer
    // with the old serial is cached: only the server itself can move it now
    c.api.upsert('services', clusterIPService('default', 'b1', ['10.0.0.62']));
    await eventually(async () => assert.equal((await c.ask('b1.default.svc.cluster.local', 'A')).packet.rcode, 'NOERROR'), 5_000, 20);
    await serial(); // within a second of the last move (on a machine this slow that it is not, the serial moves here)
    await eventually(async () => assert.notEqual(await serial(), s1), 5_000, 200);
  } finally {
    await c.stop();
  }
});
