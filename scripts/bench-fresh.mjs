#!/usr/bin/env node
// The pod's throughput for cluster names through dnsmasq, run with the manifest's dnsmasq
// arguments, with kube-dns at --ttl=30 (the original's default: dnsmasq caches cluster names)
// and at the manifest's --ttl (0: dnsmasq forwards every cluster question to kube-dns). See
// docs/freshness.md. Everything on loopback; short dnsperf runs (the machine may be shared).
//   node scripts/bench-fresh.mjs [--seconds=N]     (default 5 s per run)
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { query } from '@kube-dns/dns-client';
import { clusterIPService, dnsmasqPath, endpointSlice, freePort, headlessService, APISERVER_BOOKMARK_INTERVAL_MS, startFakeApiServer } from '@kube-dns/testkit';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const SECONDS = Number(process.argv.find((a) => a.startsWith('--seconds='))?.slice(10) ?? 5);
const say = (s) => process.stdout.write(`${s}\n`);

const docs = yaml.loadAll(await readFile(join(root, 'manifests/kube-dns.yaml'), 'utf8'));
const containers = docs.find((d) => d?.kind === 'Deployment').spec.template.spec.containers;
const argsOf = (name) => containers.find((c) => c.name === name).args;
const manifestTtl = Number(argsOf('kubedns').find((a) => a.startsWith('--ttl='))?.slice(6) ?? 30);
const dnsmasqArgs = (() => {
  const a = argsOf('dnsmasq');
  return a.slice(a.indexOf('--') + 1).filter((x) => x !== '-k' && x !== '--log-facility=-');
})();

async function startKubeDns(api, ttl) {
  const [port, healthz] = [await freePort(), await freePort()];
  const p = spawn(process.execPath, [join(root, 'packages/kube-dns/bin/kube-dns.js'), '--dns-bind-address=127.0.0.1', `--dns-port=${port}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthz}`, `--kubecfg-file=${api.kubeconfigPath}`, '--nameservers=127.0.0.1:9', '--v=0', '--domain=cluster.local.', `--ttl=${ttl}`], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  p.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  const t0 = Date.now();
  while (!(await fetch(`http://127.0.0.1:${healthz}/readiness`).then((r) => r.status === 200, () => false))) {
    if (p.exitCode !== null || Date.now() - t0 > 120_000) throw new Error(`kube-dns did not become ready: ${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, stop: () => new Promise((r) => { p.once('exit', r); p.kill('SIGTERM'); }) };
}

async function startDnsmasq(kubeDnsPort) {
  const port = await freePort();
  const args = ['-k', `--port=${port}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--no-hosts', '--no-resolv', '--conf-file=/dev/null', '--user=root', '--pid-file=', '--log-facility=/dev/null', ...dnsmasqArgs.map((a) => a.replace(/#10053$/, `#${kubeDnsPort}`))];
  const p = spawn(dnsmasqPath(), args, { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    if (await query({ host: '127.0.0.1', port }, { name: 'hits.bind', type: 'TXT', class: 'CH', timeoutMs: 200 }).then(() => true, () => false)) break;
  }
  const hits = async () => Number(String((await query({ host: '127.0.0.1', port }, { name: 'hits.bind', type: 'TXT', class: 'CH' })).packet.answers[0].data[0]));
  return { port, hits, stop: () => new Promise((r) => { p.once('exit', r); p.kill('SIGTERM'); }) };
}

async function dnsperf(label, port, file) {
  const { stdout } = await run('dnsperf', ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-l', String(SECONDS), '-c', '8', '-q', '500'], { maxBuffer: 1 << 26 });
  const qps = Math.round(Number(/Queries per second:\s+([\d.]+)/.exec(stdout)?.[1]));
  const avg = Number(/Average Latency \(s\):\s+([\d.]+)/.exec(stdout)?.[1]) * 1000;
  const lost = Number(/Queries lost:\s+(\d+)/.exec(stdout)?.[1]);
  say(`  ${label.padEnd(64)} ${String(qps).padStart(7)} qps  avg ${avg.toFixed(3)} ms  lost ${lost}`);
}

await run('dnsperf', ['-h']).catch((e) => { if (e.code === 'ENOENT') throw new Error('dnsperf is missing: scripts/install.sh --with-bench installs it (Debian package dnsperf)'); });
const dir = await mkdtemp(join(tmpdir(), 'bench-fresh-'));
const api = await startFakeApiServer({ bookmarkIntervalMs: APISERVER_BOOKMARK_INTERVAL_MS });
// 1,000 services in 50 namespaces, one in ten headless with 3 endpoints (as scripts/bench.mjs)
for (let i = 0; i < 1000; i++) {
  const ns = `ns${i % 50}`;
  if (i % 10 === 0) {
    api.upsert('services', headlessService(ns, `svc${i}`, [{ name: 'http', port: 80 }]));
    api.upsert('endpointslices', endpointSlice(ns, `svc${i}`, `svc${i}-x`, 'IPv4', [0, 1, 2].map((k) => ({ ip: `10.128.${i >> 6}.${((i & 63) << 2) + k}` })), [{ name: 'http', port: 8080 }]));
  } else api.upsert('services', clusterIPService(ns, `svc${i}`, [`10.96.${(i >> 8) & 255}.${i & 255}`], [{ name: 'http', port: 80 }]));
}
const lines = [];
for (let i = 0; i < 1000; i++) {
  const n = `svc${i}.ns${i % 50}.svc.cluster.local`;
  lines.push(`${n} A`, `${n} A`, `${n} A`, `${n} AAAA`, `_http._tcp.${n} SRV`);
}
const file = join(dir, 'queries.txt');
await writeFile(file, lines.join('\n') + '\n');
say(`cluster names (1,000 services; A, AAAA, SRV), dnsperf -c 8 -q 500 -l ${SECONDS}, loopback, 2 cores shared by dnsperf, dnsmasq and kube-dns:`);
try {
  for (const ttl of [...new Set([30, manifestTtl])]) {
    const kd = await startKubeDns(api, ttl);
    const dm = await startDnsmasq(kd.port);
    const h0 = await dm.hits();
    await dnsperf(`dnsmasq (manifest args) -> kube-dns --ttl=${ttl}`, dm.port, file);
    say(`    dnsmasq cache hits during the run: ${(await dm.hits()) - h0 - 1}`);
    await dm.stop();
    await dnsperf(`kube-dns alone --ttl=${ttl} (reference)`, kd.port, file);
    await kd.stop();
  }
} finally {
  await api.close();
  await rm(dir, { recursive: true, force: true });
}
