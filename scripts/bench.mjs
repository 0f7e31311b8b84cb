#!/usr/bin/env node
// Benchmarks (DESIGN.md §5): dnsperf against kube-dns (response cache on and off), against a
// minimal Node UDP responder (the ceiling of a Node process here), and against dnsmasq in front
// of kube-dns; then scripts/bench-footprint.mjs (memory). Everything on loopback.
//   node scripts/bench.mjs [--quick]        (--quick: shorter runs)
// Results: printed, and written to bench/results/latest.json.
import { execFile, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { query } from '@kube-dns/dns-client';
import { clusterIPService, dnsmasqPath, endpointSlice, freePort, headlessService, startFakeApiServer } from '@kube-dns/testkit';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;
const quick = process.argv.includes('--quick');
const SECONDS = quick ? 4 : 10;
const results = { date: new Date().toISOString(), node: process.version, cpus: (await import('node:os')).cpus().length, runs: [] };
const say = (s) => process.stdout.write(`${s}\n`);

function seed(api, n, headlessEvery = 10) {
  for (let i = 0; i < n; i++) {
    const ns = `ns${i % 50}`;
    if (i % headlessEvery === 0) {
      api.upsert('services', headlessService(ns, `svc${i}`, [{ name: 'http', port: 80 }]));
      api.upsert('endpointslices', endpointSlice(ns, `svc${i}`, `svc${i}-x`, 'IPv4', [0, 1, 2].map((k) => ({ ip: `10.${128 + (i >> 16)}.${(i >> 8) & 255}.${(i & 255)}`.replace(/\.(\d+)$/, `.${((i & 63) << 2) + k}`) })), [{ name: 'http', port: 8080 }]));
    } else {
      api.upsert('services', clusterIPService(ns, `svc${i}`, [`10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`], [{ name: 'http', port: 80 }]));
    }
  }
}

async function startKubeDns(api, extra = []) {
  const [port, healthz] = [await freePort(), await freePort()];
  const p = spawn(process.execPath, [join(root, 'packages/kube-dns/bin/kube-dns.js'), '--dns-bind-address=127.0.0.1', `--dns-port=${port}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthz}`, `--kubecfg-file=${api.kubeconfigPath}`, '--nameservers=127.0.0.1:9', '--v=0', ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  p.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  const t0 = Date.now();
  for (;;) {
    const ok = await fetch(`http://127.0.0.1:${healthz}/readiness`).then((r) => r.status === 200, () => false);
    if (ok) break;
    if (p.exitCode !== null || Date.now() - t0 > 300_000) throw new Error(`kube-dns did not become ready: ${err}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { p, port, healthz, syncMs: Date.now() - t0, stop: () => new Promise((r) => { p.once('exit', r); p.kill('SIGTERM'); }) };
}

async function dnsperf(label, port, file, opts = {}) {
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-l', String(opts.seconds ?? SECONDS), '-c', '8', '-q', String(opts.outstanding ?? 500)];
  if (opts.qps) args.push('-Q', String(opts.qps), '-v');
  const { stdout } = await run('dnsperf', args, { maxBuffer: 1 << 30 });
  const qps = Number(/Queries per second:\s+([\d.]+)/.exec(stdout)?.[1]);
  const lost = /Queries lost:\s+(\d+)/.exec(stdout)?.[1];
  const avg = Number(/Average Latency \(s\):\s+([\d.]+)/.exec(stdout)?.[1]) * 1000;
  const r = { label, qps: Math.round(qps), avgMs: +avg.toFixed(3), lost: Number(lost) };
  if (opts.qps) {
    const lat = [...stdout.matchAll(/^> \S+ .* ([\d.]+)$/gm)].map((m) => Number(m[1]) * 1000).sort((a, b) => a - b);
    const pct = (p) => +lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))].toFixed(3);
    Object.assign(r, { offeredQps: opts.qps, samples: lat.length, p50Ms: pct(50), p99Ms: pct(99), p999Ms: pct(99.9) });
  }
  results.runs.push(r);
  say(`  ${label.padEnd(58)} ${String(r.qps).padStart(7)} qps  avg ${r.avgMs} ms  lost ${r.lost}${r.p99Ms !== undefined ? `  p50 ${r.p50Ms} ms  p99 ${r.p99Ms} ms  p99.9 ${r.p999Ms} ms (at ${r.offeredQps} qps offered)` : ''}`);
  return r;
}

async function main() {
  await run('dnsperf', ['-h']).catch((e) => { if (e.code === 'ENOENT') throw new Error('dnsperf is missing: scripts/bench.sh installs it (Debian package dnsperf)'); });
  const dir = join(root, 'bench', 'results');
  await mkdir(dir, { recursive: true });

  // --- throughput and latency on 1,000 services, mixed questions
  say('throughput (dnsperf, 8 clients, loopback, 2 cores shared by client and server):');
  const api = await startFakeApiServer({ historySize: 200_000 });
  seed(api, 1000);
  const names = [];
  for (let i = 0; i < 1000; i++) {
    const n = `svc${i}.ns${i % 50}.svc.cluster.local`;
    names.push(`${n} A`, `${n} A`, `${n} A`, `${n} AAAA`, `_http._tcp.${n} SRV`, `nosuch${i}.ns${i % 50}.svc.cluster.local A`);
    if (i % 10 !== 0) names.push(`${i & 255}.${(i >> 8) & 255}.96.10.in-addr.arpa PTR`);
  }
  const qfile = join(dir, 'queries.txt');
  await writeFile(qfile, names.join('\n') + '\n');
  const kd = await startKubeDns(api);
  const max = await dnsperf('kube-dns, response cache on (hits)', kd.port, qfile);
  const latencyQps = Math.round(max.qps / 2);
  await dnsperf('kube-dns, latency at 10k qps', kd.port, qfile, { qps: 10_000, seconds: quick ? 3 : 10 });
  await dnsperf('kube-dns, latency at half the max rate', kd.port, qfile, { qps: latencyQps, seconds: quick ? 3 : 5 });
  await kd.stop();
  const nocache = await startKubeDns(api, ['--response-cache-entries=0']);
  await dnsperf('kube-dns, response cache off (every query resolved)', nocache.port, qfile);
  await nocache.stop();

  // the ceiling: a Node process that only copies the ID into a fixed reply
  const ceilPort = await freePort();
  const ceiling = spawn(process.execPath, ['-e', `
    const s = require('node:dgram').createSocket('udp4');
    const reply = Buffer.from('0000818000010001000000000376617200000100010376617200000100010000001e00040a000001', 'hex');
    s.on('message', (m, r) => { const b = Buffer.from(reply); m.copy(b, 0, 0, 2); s.send(b, r.port, r.address); });
    s.bind(${ceilPort}, '127.0.0.1');`], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
  await dnsperf('ceiling: minimal Node UDP responder (no DNS work)', ceilPort, qfile);
  // the same latency run against the ceiling: what the client and the machine add on their own
  await dnsperf('ceiling, latency at 10k qps (calibration)', ceilPort, qfile, { qps: 10_000, seconds: quick ? 3 : 10 });
  await dnsperf('ceiling, latency at half the max rate of kube-dns (calibration)', ceilPort, qfile, { qps: latencyQps, seconds: quick ? 3 : 5 });
  ceiling.kill();

  // dnsmasq in front (the pod's data path), cache warm
  const kd2 = await startKubeDns(api);
  const dmPort = await freePort();
  const dm = spawn(dnsmasqPath(), ['-k', `--port=${dmPort}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--no-hosts', '--no-resolv', '--conf-file=/dev/null', '--user=root', '--pid-file=', '--cache-size=10000', '--log-facility=/dev/null', `--server=/cluster.local/127.0.0.1#${kd2.port}`, `--server=/in-addr.arpa/127.0.0.1#${kd2.port}`], { stdio: 'ignore' });
  for (let i = 0; i < 50; i++) {
    if (await query({ host: '127.0.0.1', port: dmPort }, { name: 'svc1.ns1.svc.cluster.local', type: 'A', timeoutMs: 200 }).then(() => true, () => false)) break;
  }
  await dnsperf('dnsmasq (cache 10000) in front of kube-dns', dmPort, qfile);
  dm.kill();
  await kd2.stop();
  await api.close();

  await writeFile(join(dir, 'latest.json'), JSON.stringify(results, null, 2));
  say(`\nwritten: ${join('bench', 'results', 'latest.json')}`);

  // --- memory: the pod's footprint has its own script and results file (bench/results/footprint.json)
  say('');
  const fp = spawn(process.execPath, [join(root, 'scripts', 'bench-footprint.mjs'), ...(quick ? ['--quick'] : [])], { stdio: 'inherit' });
  const code = await new Promise((r) => fp.once('exit', r));
  if (code !== 0) throw new Error(`scripts/bench-footprint.mjs exited with ${code}`);
}

main().then(() => process.exit(0), (e) => { console.error(`bench failed: ${e.message}`); process.exit(1); });
