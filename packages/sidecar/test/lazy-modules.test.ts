// What the running sidecar leaves unloaded (scripts/bundle.mjs, lazy requires; docs/footprint.md):
// prom-client's Pushgateway, with node's https, tls and zlib, is never evaluated by a sidecar that
// never pushes, even after it served /metrics and its health checks; nor node's crypto (2.2 MB),
// which only express's ETags (turned off) and signed cookies would call; nor node's ES module
// loader (the launcher and the bundle are CommonJS), nor the lazy parts of node:util and node:net
// (the argument and MIME parsers, BlockList) that an ES module's import of them would load. Every
// module a process loads stays in its memory for good.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, loadReporter, startTestDnsServer } from '@kube-dns/testkit';
import { getHealth, scrape, waitFor } from './helpers.js';

const BIN = fileURLToPath(new URL('../../bin/sidecar.js', import.meta.url));

test('a serving sidecar has loaded none of the modules held back: no Pushgateway, mime-types, https, tls, zlib or crypto', async (t) => {
  // preloaded into the sidecar's process: on SIGUSR2, what it loaded
  const reporter = await loadReporter();
  t.after(() => reporter.close());
  const preload = reporter.preload;
  const server = await startTestDnsServer({ answerIp: '10.0.0.10' });
  t.after(() => server.close());
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--require', preload, BIN, '--prometheus-addr=127.0.0.1', `--prometheus-port=${port}`, `--dnsmasq-port=${await freePort()}`, `--probe=kubedns,127.0.0.1:${server.port},kubernetes.default.svc.cluster.local,1,A`],
    { stdio: 'ignore' },
  );
  t.after(() => child.kill('SIGKILL'));
  await waitFor('/healthcheck/kubedns to answer 200', async () => (await getHealth(port, 'kubedns')).status === 200, 15_000, 100);
  const { text } = await scrape(port);
  assert.match(text, /^kubedns_probe_kubedns_latency_ms_bucket/m, 'metrics served');
  const loaded = await reporter.read(child);
  assert.ok(loaded.builtins.includes('NativeModule http'), 'the list is the real one (http serves /metrics)');
  for (const m of ['https', 'tls', 'zlib', 'crypto', 'internal/util/parse_args/parse_args', 'internal/mime', 'internal/blocklist', 'internal/modules/esm/loader']) assert.ok(!loaded.builtins.includes(`NativeModule ${m}`), `${m} is not loaded`);
  assert.deepEqual(loaded.lazy, [], 'none of the modules held back until first use (mime-types, the Pushgateway, body-parser) was loaded');
});
