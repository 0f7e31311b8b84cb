// What a serving kube-dns leaves unloaded (scripts/bundle.mjs, lazy requires; docs/footprint.md):
// after its HTTP endpoints have all been asked, none of the modules the bundle holds back until
// first use was loaded (mime-types, with mime-db's tables; prom-client's Pushgateway; body-parser's
// reader); nor node's ES module loader (about 1 MB): the launcher and the bundle are CommonJS.
// Every module a process loads stays in its memory for good.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { clusterIPService, freePort, loadReporter, startFakeApiServer } from '@kube-dns/testkit';

const BIN = fileURLToPath(new URL('../../bin/kube-dns.js', import.meta.url));

async function until<T>(what: string, f: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('a serving kube-dns has loaded none of the modules held back until first use', async (t) => {
  // preloaded into kube-dns's process: on SIGUSR2, what it loaded
  const reporter = await loadReporter();
  t.after(() => reporter.close());
  const preload = reporter.preload;
  const api = await startFakeApiServer();
  t.after(() => api.close());
  api.upsert('services', clusterIPService('default', 'web', ['10.0.0.80']));
  const [dnsPort, healthz, metrics] = [await freePort(), await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    ['--require', preload, BIN, '--dns-bind-address=127.0.0.1', `--dns-port=${dnsPort}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthz}`, `--kubecfg-file=${api.kubeconfigPath}`],
    { stdio: 'ignore', env: { ...process.env, PROMETHEUS_PORT: String(metrics) } },
  );
  t.after(() => child.kill('SIGKILL'));
  const get = async (port: number, path: string) => {
    const r = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
  };
  await until('/readiness to answer 200', async () => ((await get(healthz, '/readiness')).status === 200 ? true : undefined), 20_000);
  // every endpoint, on both ports, with what an operator reads from each
  assert.deepEqual(await get(healthz, '/readiness'), { status: 200, type: 'text/plain; charset=utf-8', body: 'ok\n' });
  assert.match((await get(healthz, '/healthz')).body, /^ok \(\d{4}-/);
  const version = await get(healthz, '/version');
  assert.equal(version.type, 'application/json; charset=utf-8');
  assert.match(JSON.parse(version.body).version, /^\d+\.\d+\.\d+/);
  const cache = await get(healthz, '/cache');
  assert.equal(cache.type, 'application/json; charset=utf-8');
  assert.ok(JSON.stringify(JSON.parse(cache.body)).includes('10.0.0.80'), '/cache lists the service');
  for (const port of [healthz, metrics]) {
    const m = await get(port, '/metrics');
    assert.match(m.type ?? '', /^text\/plain; version=0\.0\.4/);
    assert.match(m.body, /^kubedns_dns_requests_total|^# HELP kubedns_/m);
  }

  const loaded = await reporter.read(child);
  assert.ok(loaded.builtins.includes('NativeModule http'), 'the report is the real one (http serves the endpoints)');
  assert.ok(!loaded.builtins.includes('NativeModule internal/modules/esm/loader'), "node's ES module loader is not loaded");
  assert.deepEqual(loaded.lazy, [], 'no module held back until first use was loaded');
});
