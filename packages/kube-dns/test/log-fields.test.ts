// kube-dns's stderr lines as a log pipeline reads them: one JSON object per line whose keys are
// unique (Elasticsearch refuses a document with a key twice; other parsers keep the last value),
// `name` being the logger's, as pino writes it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { query } from '@kube-dns/dns-client';
import { clusterIPService, freePort, startFakeApiServer } from '@kube-dns/testkit';

const BIN = fileURLToPath(new URL('../../bin/kube-dns.js', import.meta.url));

test("a failed upstream's warning names the query in qname: no key twice, the logger's name kept", async (t) => {
  const api = await startFakeApiServer();
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.96.0.1'], [{ name: 'https', port: 443 }]));
  t.after(() => api.close());
  const [dnsPort, healthzPort, closedPort] = [await freePort(), await freePort(), await freePort()];
  const p = spawn(
    process.execPath,
    [BIN, '--dns-bind-address=127.0.0.1', `--dns-port=${dnsPort}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthzPort}`, `--kubecfg-file=${api.kubeconfigPath}`, '--lameduck=0s', `--nameservers=127.0.0.1:${closedPort}`, '--v=3'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  p.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((r) => p.on('exit', r));
  t.after(async () => {
    p.kill('SIGTERM');
    await exited;
  });
  for (let ready = false; !ready; ) {
    assert.equal(p.exitCode, null, stderr);
    ready = await fetch(`http://127.0.0.1:${healthzPort}/readiness`).then((r) => r.ok, () => false);
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  const r = await query({ host: '127.0.0.1', port: dnsPort }, { name: 'www.example.org', type: 'A', timeoutMs: 5000 });
  assert.equal(r.packet.rcode, 'SERVFAIL');
  p.kill('SIGTERM');
  await exited;
  const lines = stderr.split('\n').filter(Boolean);
  for (const line of lines) {
    // written again from what a parser kept: shorter when a key was there twice
    assert.equal(JSON.stringify(JSON.parse(line)), line, 'every key once');
  }
  const warned = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => String(l.msg).startsWith('upstream nameserver'));
  assert.deepEqual([warned?.name, warned?.component, warned?.qname], ['kube-dns', 'kube-dns', 'www.example.org']);
});
