#!/usr/bin/env node
// Reliability figures (docs/reliability.md): kube-dns with the manifest's arguments (2,000
// services in the testkit's API server, forwarding to an upstream that never answers) under three
// floods, one after the other:
//   1. unique external names (the "water torture" resolvers see daily) at 20,000 qps;
//   2. 5,000 TCP connections opened and left idle, half of them after a partial length prefix;
//   3. malformed UDP packets (random bytes) as fast as one sender can.
// For each: a well-behaved client asks cluster names every 5 ms (over UDP; over TCP for the TCP
// flood; on a thread of its own, scripts/bench-probe.mjs) before and during the flood, p50/p99
// and failures of each phase, and kube-dns's RSS before, at its peak during and 30 s after.
// --soak MINUTES: then the realistic mix at 2,000 qps with one service changing every 0.2 s, RSS
// every 10 s: its slope after the first fifth (the warm-up), and every error (the upstream is
// switched to one that answers first: a dead upstream's SERVFAILs are not kube-dns's errors).
//   node scripts/bench-reliability.mjs [--quick] [--soak MINUTES [--only-soak]]
// Results: printed, and written to bench/results/latest.json (sections "reliability" and "soak",
// so that a run of the floods alone keeps the last soak).
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { createSocket } from 'node:dgram';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { query } from '@kube-dns/dns-client';
import { APISERVER_BOOKMARK_INTERVAL_MS, startFakeApiServer, startTestDnsServer } from '@kube-dns/testkit';
import { probe } from './bench-probe.mjs';
import { dnsperf, killAllNow, manifestArgs, sleep, start, startKubeDns, stop } from './bench-procs.mjs';
import { LATEST, writeSection } from './bench-results.mjs';
import { churnOne, mixFile, seedCluster } from './bench-workloads.mjs';

const root = new URL('..', import.meta.url).pathname;

const quick = process.argv.includes('--quick');
const soakAt = process.argv.indexOf('--soak');
const soakMinutes = soakAt > 0 ? Number(process.argv[soakAt + 1]) : 0;
if (soakAt > 0 && !(soakMinutes > 0)) throw new Error('--soak MINUTES: a positive number of minutes');
const onlySoak = process.argv.includes('--only-soak');
if (onlySoak && !(soakMinutes > 0)) throw new Error('--only-soak goes with --soak MINUTES');
const T = quick ? { base: 4, flood: 5, after: 10 } : { base: 10, flood: 10, after: 30 };
const say = (s = '') => process.stdout.write(`${s}\n`);

async function rssMb(pid) {
  const kb = /VmRSS:\s+(\d+)/.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''))?.[1];
  return kb === undefined ? NaN : Math.round(Number(kb) / 1024);
}

/** Peak RSS of `pid` while `work` runs (sampled every 100 ms). */
async function peakWhile(pid, work) {
  let peak = await rssMb(pid);
  let done = false;
  const sampler = (async () => {
    while (!done) {
      peak = Math.max(peak, await rssMb(pid));
      await sleep(100);
    }
  })();
  const value = await work.finally(() => (done = true));
  await sampler;
  return { peak, value };
}

/** Runs `flood` (a promise-returning function) while probing; the probe's baseline comes first. */
async function measureFlood(kind, kd, names, transport, flood) {
  const base = await probe(kd.port, names, T.base, transport);
  const before = await rssMb(kd.p.pid);
  const { peak, value: [during, sent] } = await peakWhile(kd.p.pid, Promise.all([probe(kd.port, names, T.flood, transport), flood()]));
  await sleep(T.after * 1000);
  const after = await rssMb(kd.p.pid);
  const r = { kind, transport, base, during, sent, rss: { beforeMb: before, peakMb: peak, afterMb: after, afterSeconds: T.after }, alive: kd.p.exitCode === null };
  say(`${kind}:`);
  say(`  sent ${typeof sent === 'object' ? JSON.stringify(sent) : sent}`);
  say(`  well-behaved ${transport.toUpperCase()} client, before: ${base.asked} asked, ${base.failed} failed, p50 ${base.p50Ms} ms, p99 ${base.p99Ms} ms, max ${base.maxMs} ms`);
  say(`  well-behaved ${transport.toUpperCase()} client, during: ${during.asked} asked, ${during.failed} failed, p50 ${during.p50Ms} ms, p99 ${during.p99Ms} ms (${(during.p99Ms / base.p99Ms).toFixed(1)}x), max ${during.maxMs} ms`);
  say(`  RSS: ${before} MB before, ${peak} MB peak, ${after} MB ${T.after} s after${r.alive ? '' : '; kube-dns EXITED'}`);
  return r;
}

// --- the floods ------------------------------------------------------------------------------

/**
 * The water torture's names, written before the probe starts: building them takes this process
 * 171 ms (measured), which no measurement should overlap.
 */
async function tortureFile(work) {
  const file = join(work, 'torture.txt');
  const lines = [];
  for (let i = 0; i < 400_000; i++) lines.push(`q${i}-${(i * 2654435761) >>> 0}.torture.example.com A`);
  await writeFile(file, lines.join('\n') + '\n');
  return file;
}

async function waterTorture(port, file) {
  // open loop: up to 60,000 outstanding with a 2 s timeout, so that the flood keeps its rate when
  // kube-dns drops what is over its forward cap (an attacker does not wait for replies either)
  const r = await dnsperf(port, file, { seconds: T.flood, qps: 20_000, outstanding: 60_000, timeoutS: 2 });
  return { queries: r.sent, rcodes: r.rcodes, unanswered: r.timeouts };
}

/** A child process: opens `n` TCP connections and holds them; every other one sends one byte of a length prefix. */
const TCP_HOLDER = `
const net = require('node:net');
const [port, n, seconds] = process.argv.slice(1).map(Number);
let open = 0, refused = 0, closedByServer = 0;
for (let i = 0; i < n; i++) {
  const s = net.connect(port, '127.0.0.1', () => { open++; if (i % 2) s.write(Buffer.from([0])); });
  s.on('error', () => refused++);
  s.on('close', () => closedByServer++);
}
setTimeout(() => { process.stdout.write(JSON.stringify({ connections: n, opened: open, errors: refused, closedByServer })); process.exit(0); }, seconds * 1000);`;

async function tcpFlood(port) {
  const p = start(process.execPath, ['-e', TCP_HOLDER, String(port), '5000', String(T.flood)], { stdout: 'pipe' });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  await new Promise((r) => p.once('exit', r));
  return JSON.parse(out || '{}');
}

/** A child process: random datagrams of 1-512 bytes as fast as it can, for `seconds`. */
const JUNK_SENDER = `
const s = require('node:dgram').createSocket('udp4');
const [port, seconds] = process.argv.slice(1).map(Number);
const end = Date.now() + seconds * 1000;
let sent = 0;
const pool = require('node:crypto').randomBytes(1 << 20);
function burst() {
  for (let i = 0; i < 200; i++) {
    const len = 1 + ((pool[sent % pool.length] << 1) | 1) % 512;
    const off = (sent * 997) % (pool.length - 512);
    s.send(pool.subarray(off, off + len), port, '127.0.0.1');
    sent++;
  }
  if (Date.now() < end) setImmediate(burst); else setTimeout(() => { process.stdout.write(String(sent)); process.exit(0); }, 200);
}
burst();`;

async function junkFlood(port) {
  const p = start(process.execPath, ['-e', JUNK_SENDER, String(port), String(T.flood)], { stdout: 'pipe' });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  await new Promise((r) => p.once('exit', r));
  return { packets: Number(out) };
}

// --- the soak --------------------------------------------------------------------------------

/** Least-squares slope of y over x. */
function slope(points) {
  const n = points.length;
  const mx = points.reduce((a, p) => a + p[0], 0) / n;
  const my = points.reduce((a, p) => a + p[1], 0) / n;
  const num = points.reduce((a, p) => a + (p[0] - mx) * (p[1] - my), 0);
  const den = points.reduce((a, p) => a + (p[0] - mx) ** 2, 0);
  return den ? num / den : 0;
}

/** From kube-dns's /metrics, in MB: the JS heap in use and the response cache's bytes (NaN if unreadable). */
async function heapAndCacheMb(metricsPort) {
  const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()).catch(() => '');
  const mb = (name) => Math.round(Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 1048576);
  return [mb('nodejs_heap_size_used_bytes'), mb('kubedns_response_cache_bytes')];
}

/**
 * The least heap in use in each sixth of the run, MB. The heap is a sawtooth (it grows between
 * collections), so its slope depends on where the samples cut the teeth; what a leak raises is
 * the floor the collections bring it back to.
 */
function heapFloors(samples, minutes) {
  return Array.from({ length: 6 }, (_, i) => Math.min(...samples.filter(([t]) => t >= (i * minutes) / 6 && t < ((i + 1) * minutes) / 6).map((s) => s[2])));
}

async function soak(kd, api, cluster, work, minutes) {
  const file = await mixFile(cluster, join(work, 'soak.txt'), 7);
  let k = 0;
  const churn = setInterval(() => churnOne(api, k++), 200);
  // every 10 s: [minute, RSS, JS heap in use, response cache], MB. RSS alone cannot tell a leak
  // from the response cache filling up to --response-cache-bytes (a bound) or V8 keeping pages.
  const samples = [];
  const t0 = Date.now();
  let stopped = false;
  const sampler = (async () => {
    while (!stopped) {
      samples.push([(Date.now() - t0) / 60_000, await rssMb(kd.p.pid), ...(await heapAndCacheMb(kd.metrics))]);
      await sleep(10_000);
    }
  })();
  // one dnsperf run per minute, so a stall shows in a minute's figures rather than the total's
  const runs = [];
  for (let m = 0; m < minutes; m++) runs.push(await dnsperf(kd.port, file, { seconds: 60, qps: 2000 }));
  stopped = true;
  clearInterval(churn);
  await sampler;
  const warm = samples.filter(([t]) => t >= minutes / 5);
  const perHour = +(slope(warm) * 60).toFixed(1);
  const heapPerHour = +(slope(warm.map(([t, , heap]) => [t, heap])) * 60).toFixed(1);
  const floors = heapFloors(samples, minutes);
  const sum = (f) => runs.reduce((a, r) => a + f(r), 0);
  const r = {
    minutes,
    qps: 2000,
    churnPerSecond: 5,
    queries: sum((x) => x.sent),
    lost: sum((x) => x.lost),
    timeouts: sum((x) => x.timeouts ?? 0),
    servfail: sum((x) => x.rcodes.SERVFAIL ?? 0),
    worstMinuteP99Ms: Math.max(...runs.map((x) => x.p99Ms)),
    rss: { startMb: samples[0][1], afterWarmupMb: warm[0]?.[1], endMb: samples.at(-1)[1], maxMb: Math.max(...samples.map((s) => s[1])), slopeMbPerHourAfterWarmup: perHour },
    heap: { afterWarmupMb: warm[0]?.[2], endMb: samples.at(-1)[2], maxMb: Math.max(...samples.map((s) => s[2])), slopeMbPerHourAfterWarmup: heapPerHour, floorsMb: floors },
    responseCache: { afterWarmupMb: warm[0]?.[3], endMb: samples.at(-1)[3] },
    samples,
  };
  say(`soak: ${minutes} min of the mix at 2,000 qps, one service changing every 0.2 s (${k} changes)`);
  say(`  ${r.queries} queries, ${r.lost} lost, ${r.timeouts} timed out, ${r.servfail} SERVFAIL; worst minute's p99 ${r.worstMinuteP99Ms} ms`);
  say(`  RSS ${r.rss.startMb} MB at the start, ${r.rss.afterWarmupMb} MB after the warm-up, ${r.rss.endMb} MB at the end (max ${r.rss.maxMb}); slope after the warm-up ${perHour} MB/hour`);
  say(`  JS heap in use ${r.heap.afterWarmupMb} MB after the warm-up, ${r.heap.endMb} MB at the end (max ${r.heap.maxMb}); slope after the warm-up ${heapPerHour} MB/hour`);
  say(`  JS heap floor (the least in use) per sixth of the run: ${floors.join(', ')} MB`);
  say(`  response cache ${r.responseCache.afterWarmupMb} MB after the warm-up, ${r.responseCache.endMb} MB at the end`);
  return r;
}

// --- main --------------------------------------------------------------------------------------

async function main() {
  const work = await mkdtemp(join(tmpdir(), 'bench-reliability-'));
  const cleanup = [];
  const out = { date: new Date().toISOString(), node: process.version, quick, seconds: T, floods: [] };
  try {
    const m = await manifestArgs();
    const api = await startFakeApiServer({ historySize: 20_000, bookmarkIntervalMs: APISERVER_BOOKMARK_INTERVAL_MS });
    cleanup.push(() => api.close());
    const cluster = seedCluster(api);
    // an upstream that never answers: every forward holds its slot until it times out
    const silent = createSocket('udp4');
    await new Promise((r) => silent.bind(0, '127.0.0.1', r));
    cleanup.push(() => new Promise((r) => silent.close(r)));
    const configDir = join(work, 'config');
    await mkdir(configDir);
    await writeFile(join(configDir, 'upstreamNameservers'), JSON.stringify([`127.0.0.1:${silent.address().port}`]));
    const kd = await startKubeDns(m, api, configDir);
    cleanup.push(() => stop(kd.p));
    const names = cluster.services.filter((n) => !n.startsWith('big.')).slice(0, 500);
    say(`kube-dns with the manifest's arguments, ${cluster.services.length} services; ${quick ? 'quick run' : 'full run'}\n`);

    if (!onlySoak) {
      const torture = await tortureFile(work);
      out.floods.push(await measureFlood('unique external names at 20,000 qps, upstream silent', kd, names, 'udp', () => waterTorture(kd.port, torture)));
      out.floods.push(await measureFlood('5,000 TCP connections held open (half with a partial length prefix)', kd, names, 'tcp', () => tcpFlood(kd.port)));
      out.floods.push(await measureFlood('malformed UDP packets', kd, names, 'udp', () => junkFlood(kd.port)));
      await writeSection('reliability', out);
      say(`\nwritten: ${LATEST.slice(root.length)} (section "reliability")`);
    }
    if (soakMinutes > 0) {
      // the soak measures errors of kube-dns, not of a dead upstream: names it forwards (the PTRs of
      // addresses the churn moved away) go to one that answers, through a live ConfigMap edit
      const upstream = await startTestDnsServer({ answerIp: '192.0.2.1' });
      cleanup.push(() => upstream.close());
      await writeFile(join(configDir, 'upstreamNameservers'), JSON.stringify([`127.0.0.1:${upstream.port}`]));
      for (let i = 0; i < 100; i++) {
        const r = await query({ host: '127.0.0.1', port: kd.port }, { name: 'soak-ready.example.org', type: 'A', timeoutMs: 500 }).catch(() => undefined);
        if (r?.packet.rcode === 'NOERROR') break;
        await sleep(200);
      }
      await writeSection('soak', { date: new Date().toISOString(), node: process.version, ...(await soak(kd, api, cluster, work, soakMinutes)) });
      say(`written: ${LATEST.slice(root.length)} (section "soak")`);
    }
  } finally {
    for (const f of cleanup.reverse()) await f().catch(() => {});
    await rm(work, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (e) => { console.error(`bench-reliability failed: ${e.stack ?? e.message}`); killAllNow(); process.exit(1); });
