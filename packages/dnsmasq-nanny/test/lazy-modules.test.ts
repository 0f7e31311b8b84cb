// What the running nanny leaves unloaded (docs/footprint.md): node's crypto, which costs a process
// about 2.2 MB, is loaded by nothing the nanny does while it serves. The ConfigMap's version is an
// FNV-1a hash and its probes' query IDs come from Math.random (a probe on loopback is nothing an
// off-path attacker could answer); Kubernetes Events (https, with crypto) are sent only when
// dnsmasq has to be restarted. Nor node's modules that only something the nanny never does needs:
// v8 (execa's IPC), readline (dnsmasq's output is split into lines by the nanny itself),
// perf_hooks (probe timing reads process.hrtime), node's ES module loader (the launcher and the
// bundle are CommonJS), and the lazy parts of node:util and node:process that an ES module's
// import of them would load.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadReporter, startTestDnsServer } from '@kube-dns/testkit';
import { lookupA, startNanny } from './nanny-harness.js';

test('a serving nanny has not loaded node:crypto, v8, readline, perf_hooks or the ES module loader: ConfigMap read and applied, dnsmasq probed, lookups answered', async (t) => {
  const reporter = await loadReporter();
  t.after(() => reporter.close());
  const stub = await startTestDnsServer({ answerIp: '10.3.0.1' });
  t.after(() => stub.close());
  const nanny = await startNanny(t, {
    config: { stubDomains: JSON.stringify({ 'acme.local': [`127.0.0.1:${stub.port}`] }), hosts: '192.0.2.5 h.example\n' },
    flags: ['-livenessProbeInterval=100ms'],
    env: { NODE_OPTIONS: `--require ${reporter.preload}` },
  });
  assert.deepEqual((await lookupA(nanny.port, 'www.acme.local')).ips, ['10.3.0.1'], 'the stub domain from the ConfigMap answers');
  assert.deepEqual((await lookupA(nanny.port, 'h.example')).ips, ['192.0.2.5'], 'the hosts from the ConfigMap answer');
  await new Promise((r) => setTimeout(r, 500)); // a few liveness probes (DNS queries built by the nanny)
  const loaded = await reporter.read(nanny.proc);
  assert.ok(loaded.builtins.includes('NativeModule child_process'), 'the list is the real one (child_process runs dnsmasq)');
  assert.ok(!loaded.builtins.includes('NativeModule crypto'), 'node:crypto is not loaded');
  assert.ok(!loaded.builtins.includes('Internal Binding crypto'), "node's crypto binding (OpenSSL) is not initialised");
  for (const m of ['v8', 'readline', 'perf_hooks', 'internal/util/parse_args/parse_args', 'internal/process/report', 'internal/modules/esm/loader']) {
    assert.ok(!loaded.builtins.includes(`NativeModule ${m}`), `node:${m} is not loaded`);
  }
  assert.equal(nanny.proc.exitCode, null, 'the nanny kept running');
});
