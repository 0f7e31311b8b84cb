#!/usr/bin/env node
// Benchmarks: dnsperf against kube-dns started as the manifest runs it (packages/kube-dns/bin, the
// manifest's arguments on loopback ports, 2,000 services in the testkit's fake API server), every
// figure next to a ceiling measured in the same run: a minimal Node UDP responder that parses the
// question and answers one fixed A record. What each line measures, and why: docs/benchmarks.md.
//   node scripts/bench.mjs [--quick] [--dns-only] [--soak MINUTES]
//   (--quick: short runs for development, goals still printed; --dns-only: skip the headless
//   churn, memory and reliability scripts run after this one; --soak: passed to
//   scripts/bench-reliability.mjs)
// Results: printed, written to bench/results/latest.json (section "dns"; other scripts add theirs)
// and drawn in bench/results/latest.svg.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { query } from '@kube-dns/dns-client';
import { dnsmasqPath, freePort } from '@kube-dns/testkit';
import { startAbuse } from './bench-abuse.mjs';
import { ceilingProgram } from './bench-ceiling.cjs';
import { dnsperf, killAllNow, loopMetrics, manifestArgs, KUBE_DNS_BIN, pinApart, PIN, pooled, sleep, start, startKubeDns, stop, TIMEOUT_S } from './bench-procs.mjs';
import { gitInfo, LATEST, RESULTS_DIR, writeSection } from './bench-results.mjs';
import { drawSvg } from './bench-svg.mjs';
import { churnOne, externalFile, mixFile, nxdomainFile, repeatedFile, SERVICES, startBenchCluster } from './bench-workloads.mjs';

const root = new URL('..', import.meta.url).pathname;
const quick = process.argv.includes('--quick');
// Seconds per run. The DNS lines take about 12 minutes on 2 cores; --quick about 3.
// Three rounds of the throughput and pod runs: with two, one fast spell of the machine in one
// reference run decided a goal (the pod at 0.93x on 2026-11-27, 1.0x round by round).
const T = quick
  ? { warm: 2, tput: 3, rounds: 1, fixed: 10, slices: 2, abuse: 3, abusePairs: 3, pod: 3 }
  : { warm: 3, tput: 8, rounds: 3, fixed: 60, slices: 6, abuse: 10, abusePairs: 3, pod: 8 };
const say = (s = '') => process.stdout.write(`${s}\n`);

async function kubeDnsHelp() {
  const p = start(process.execPath, [KUBE_DNS_BIN, '--help'], { stdout: 'pipe' });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  await new Promise((r) => p.once('exit', r));
  return out + p.tail;
}

// The ceiling: the least a Node UDP server can do per query, parse the question and answer it
// (scripts/bench-ceiling.cjs, which says why it sends as kube-dns's listener does).
async function startCeiling() {
  const port = await freePort();
  const p = start(process.execPath, ['-e', ceilingProgram(), String(port)]);
  await waitAnswer(port, 'ceiling.test', 'A');
  return { p, port };
}

async function waitAnswer(port, name, type, ms = 20_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const ok = await query({ host: '127.0.0.1', port }, { name, type, timeoutMs: 300 }).then((r) => (r.packet.answers ?? []).length > 0, () => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`no answer for ${name} ${type} on 127.0.0.1:${port} within ${ms} ms`);
    await sleep(100);
  }
}

/** The pod: kube-dns (already running), the nanny running dnsmasq with the manifest's arguments, the sidecar. */
async function startPod(m, kd, configDir, work) {
  const [dns, sidecarPort] = [await freePort(), await freePort()];
  const nanny = m.nanny
    .map((a) => a.replace(/^(-{1,2}configDir=).*/, `$1${configDir}`).replace(/^(-{1,2}stateDir=).*/, `$1${join(work, 'nanny')}`))
    .concat([`-kubednsServer=127.0.0.1:${kd.port}`, `-dnsmasqExec=${dnsmasqPath()}`]);
  const dm = m.dnsmasq.map((a) => a.replace(/#10053$/, `#${kd.port}`)).concat(loopbackDnsmasq(dns));
  const pn = start(process.execPath, [join(root, 'packages', 'dnsmasq-nanny', 'bin', 'dnsmasq-nanny.js'), ...nanny, '--', ...dm], { env: m.env.nanny });
  const sc = m.sidecar
    .map((a) => a.replace('127.0.0.1:10053', `127.0.0.1:${kd.port}`).replace('127.0.0.1:53,', `127.0.0.1:${dns},`))
    .concat(['--dnsmasq-addr=127.0.0.1', `--dnsmasq-port=${dns}`, '--prometheus-addr=127.0.0.1', `--prometheus-port=${sidecarPort}`]);
  const ps = start(process.execPath, [join(root, 'packages', 'sidecar', 'bin', 'sidecar.js'), ...sc], { env: m.env.sidecar });
  await waitAnswer(dns, 'www.site0.example.org', 'A').catch((e) => { throw new Error(`${e.message}\nnanny: ${pn.tail}`); });
  await waitAnswer(dns, 'svc1.ns1.svc.cluster.local', 'A');
  return { port: dns, procs: [ps, pn] };
}

/** dnsmasq alone with the same cache settings, forwarding everything to the stand-in upstream. */
async function startBareDnsmasq(m, upstreamPort) {
  const port = await freePort();
  const args = m.dnsmasq.filter((a) => !/^--server=/.test(a) && a !== '--dns-loop-detect').concat(loopbackDnsmasq(port), ['--no-resolv', `--server=127.0.0.1#${upstreamPort}`]);
  const p = start(dnsmasqPath(), args);
  await waitAnswer(port, 'www.site0.example.org', 'A').catch((e) => { throw new Error(`${e.message}\ndnsmasq: ${p.tail}`); });
  return { port, p };
}

function loopbackDnsmasq(port) {
  return [`--port=${port}`, '--listen-address=127.0.0.1', '--bind-interfaces', '--no-hosts', '--conf-file=/dev/null', '--pid-file=', ...(process.getuid?.() === 0 ? ['--user=root'] : [])];
}

/** '; stalls over 5 ms: N spent mostly waiting for a CPU, M of kube-dns's own' when kube-dns counts them. */
function stallText(e) {
  const s = e.stallsOver5ms;
  return s ? `; stalls over 5 ms: ${s.cpuWait} spent mostly waiting for a CPU, ${s.process} of kube-dns's own` : '';
}

// ---------------------------------------------------------------------------------------------
// kube-dns's event-loop delay, from its metrics on PROMETHEUS_PORT (added by the hot-path work),
// over kube-dns's own runs only. The gauge is the max since the previous scrape: the meter scrapes
// as a run starts (so what came before does not count), every 5 s during it (as a Prometheus
// would: a scrape is work on the loop too) and as it ends, and keeps the largest; the counters
// (the histogram's samples over 5 ms, the loop thread's CPU wait, the stalls kube-dns told
// apart) are summed over the runs. The ceiling's runs in between do not count: kube-dns is idle
// then, and a timer of an idle process that fires late, while the ceiling and dnsperf hold both
// cores, delays no query (until 2026-11-26, 16:00 UTC, they counted).
function stallMeter(port) {
  // one scrape, parsed (loopMetrics, shared with bench-tail.mjs)
  const get = () => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '').then(loopMetrics);
  const KEYS = ['le5', 'count', 'cpuWait', 'stallsCpuWait', 'stallsProcess'];
  let max;
  let exported = false;
  const sums = Object.fromEntries(KEYS.map((k) => [k, 0]));
  const known = new Set(KEYS);
  const seen = (s) => {
    if (s.max !== undefined) {
      exported = true;
      max = Math.max(max ?? 0, s.max);
    }
  };
  return {
    /** Runs `run()` (one of kube-dns's runs) and counts the loop's delays during it. */
    async during(run) {
      const first = await get(); // resets the gauge
      let stopped = false;
      const loop = (async () => {
        for (let t = 0; !stopped; t += 100) {
          await sleep(100);
          if (t >= 5000 && !stopped) {
            seen(await get());
            t = 0;
          }
        }
      })();
      try {
        return await run();
      } finally {
        stopped = true;
        await loop;
        const last = await get();
        seen(last);
        for (const k of KEYS) {
          if (last[k] === undefined || first[k] === undefined) known.delete(k);
          else sums[k] += last[k] - first[k];
        }
      }
    },
    /** What the runs so far showed; `seconds` is how long they ran in all. */
    result(seconds) {
      if (!exported) return { exported: false };
      const d = (k) => (known.has(k) ? sums[k] : undefined);
      return {
        exported: true,
        seconds,
        maxMs: max === undefined ? undefined : +(max * 1000).toFixed(2),
        samplesOver5ms: known.has('count') && known.has('le5') ? sums.count - sums.le5 : undefined,
        samples: d('count'),
        // the time the event loop's thread waited for a CPU meanwhile: a stall that is the
        // machine's contention (dnsperf shares the two cores), not kube-dns's work
        cpuWaitMs: known.has('cpuWait') ? Math.round(sums.cpuWait * 1000) : undefined,
        stallsOver5ms: known.has('stallsProcess') ? { cpuWait: d('stallsCpuWait'), process: d('stallsProcess') } : undefined,
      };
    },
  };
}

// ---------------------------------------------------------------------------------------------
/** The reference's own p99.9 above which a fixed rate measures the machine and dnsperf (see its use). */
const CLEAN_MS = 5;
/**
 * The ceiling's p99 over its p50 at the judged rate above which the host, not a server, set the
 * tail. The ceiling does nothing but answer, at a rate it sustains with ease: on a quiet host here
 * its p99 was 3.2-4.5 times its p50 in the full runs whose p50 is on record (0.124-0.213 against
 * 0.039-0.047 ms, 2026-11-26 and 27); on a host that delayed every wakeup (2026-11-27 afternoon)
 * 13-20 times, and the saturated ratios fell with it (the mix 0.55-0.81x against 0.81-0.88x).
 * Reported, not judged (docs/benchmarks.md, "Reading the figures").
 */
const HOST_BUSY_RATIO = 8;
/** A latency figure that hits the timeout says so: the ratio is then a floor, not the truth. */
const lostNote = (r) => (r.timeouts ? `; ${((100 * r.timeouts) / r.samples).toFixed(1)}% of the queries timed out after ${TIMEOUT_S} s` : '');
/**
 * A latency goal: `r`'s percentile `key` within `limit` times `ref`'s. When the reference's own
 * percentile is a timeout there is nothing to compare with: the goal is not judged (null).
 */
function latencyGoal(goal, r, ref, key, limit, refName, note = '') {
  const detail = `${r[key]} vs ${ref[key]} ms${lostNote(r)}${note}`;
  if (ref[key] >= TIMEOUT_S * 1000) return { goal, met: null, detail: `${detail}; ${refName} lost queries (${ref.timeouts} timed out), so its percentile is no reference` };
  return { goal, value: ratio(r[key], ref[key]), limit, met: r[key] <= limit * ref[key], detail };
}
/**
 * A latency goal judged only against a clean reference: when the ceiling's own p99.9 over the
 * pooled runs is over CLEAN_MS, the machine set the tail while they ran (the short probe that
 * chose the rate was clean, the full runs were not), and a ratio of two noisy figures would
 * say "met" or "not met" by chance: not judged (null), with the figures.
 */
function cleanOnly(g, ref) {
  if (g.met === null || ref.p999Ms <= CLEAN_MS) return g;
  return { goal: g.goal, met: null, detail: `${g.detail}; not judged: the ceiling's own p99.9 in these runs was ${ref.p999Ms} ms (over ${CLEAN_MS}), the machine set this tail` };
}
/**
 * The stall goal is absolute (no delay over 5 ms), so a delay under it is met whatever the
 * machine did. One over it, in runs where the ceiling's own p99.9 was over CLEAN_MS, is not
 * judged, as the latency goals there are not: one reply in a thousand of the ceiling, which does
 * nothing but answer, came more than 5 ms late, so at that rate the machine holds processes
 * (the server or dnsperf) off the CPU for that long, and a delay of kube-dns's loop over 5 ms
 * tells nothing of kube-dns.
 */
function stallGoal(g, ref) {
  if (g.met !== false || ref.p999Ms <= CLEAN_MS) return g;
  return { ...g, met: null, detail: `${g.detail}; not judged: the ceiling's own p99.9 in these runs was ${ref.p999Ms} ms (over ${CLEAN_MS}), the machine delayed even its replies by more than 5 ms` };
}
/** The run whose p99 is the median of the runs (the upper one of an even count). */
const medianRun = (rs) => [...rs].sort((a, b) => a.p99Ms - b.p99Ms)[Math.floor(rs.length / 2)];
/** The abuser's counts over several runs: sums, and the largest replies. */
const sumAbuse = (a, b) => (a ? Object.fromEntries(Object.keys(b).map((k) => [k, k.startsWith('max') ? Math.max(a[k], b[k]) : a[k] + b[k]])) : b);
const fmt = (n) => (n === undefined || Number.isNaN(n) ? 'n/a' : Math.round(n).toLocaleString('en-US'));
const ratio = (a, b) => +(a / b).toFixed(2);
function line(label, r) {
  const lat = r.p99Ms !== undefined ? `  p50 ${r.p50Ms}  p99 ${r.p99Ms}  p99.9 ${r.p999Ms} ms  (${fmt(r.samples)} samples, ${r.timeouts} timeouts)` : `  avg ${r.avgMs} ms`;
  say(`  ${label.padEnd(46)} ${fmt(r.qps).padStart(8)} qps  lost ${r.lost}${lat}`);
  // pooled runs: each run's own p99 too, so a slow spell shows where it fell
  if (r.sliceP99Ms) say(`  ${''.padEnd(46)} p99 of each of the ${r.slices} runs: ${r.sliceP99Ms.join(', ')} ms`);
}

async function main() {
  await new Promise((res, rej) => {
    const p = spawn('dnsperf', ['-h'], { stdio: 'ignore' });
    p.on('error', (e) => rej(e.code === 'ENOENT' ? new Error('dnsperf is missing: scripts/bench.sh installs it (Debian package dnsperf)') : e));
    p.on('exit', res);
  });
  const t0 = Date.now();
  const out = {
    date: new Date().toISOString(),
    command: `${process.env.KUBEDNS_BENCH_PIN === '1' ? 'KUBEDNS_BENCH_PIN=1 ' : ''}node scripts/bench.mjs${quick ? ' --quick' : ''}`,
    quick,
    machine: { node: process.version, cpus: cpus().length, loadavgAtStart: loadavg().map((x) => +x.toFixed(2)) },
    code: await gitInfo(),
    setup: { services: SERVICES, namespaces: 20, seconds: T },
  };
  const m = await manifestArgs();
  const work = await mkdtemp(join(tmpdir(), 'kube-dns-bench-'));
  const cleanup = [];
  try {
    const { api, cluster, upstream, configDir } = await startBenchCluster(work, cleanup);

    let salt = 0;
    const files = {
      repeated: () => repeatedFile(cluster, join(work, 'repeated.txt')),
      mix: () => mixFile(cluster, join(work, `mix-${++salt}.txt`), salt),
      nxdomain: () => nxdomainFile(join(work, `nx-${++salt}.txt`), salt),
    };
    const ceiling = await startCeiling();
    cleanup.push(() => stop(ceiling.p));
    const kd = await startKubeDns(m, api, configDir);
    cleanup.push(() => stop(kd.p));
    say(`kube-dns ready after ${kd.syncMs} ms (${SERVICES} services); ${quick ? 'quick run' : 'full run'}, load average ${out.machine.loadavgAtStart.join(' ')}`);
    await dnsperf(kd.port, await files.mix(), { seconds: T.warm }); // warm-up: JIT, caches
    await dnsperf(ceiling.port, await files.repeated(), { seconds: 1 });

    // --- throughput: ceiling and kube-dns alternate on the same kind of file; best of the rounds
    say(`\nthroughput (dnsperf on loopback, ${PIN ? 'on CPU 0 and the server on CPU 1' : 'sharing the 2 cores with the server'}):`);
    const samples = { repeated: { ceiling: [], kubedns: [] }, mix: { ceiling: [], kubedns: [] }, nxdomain: { ceiling: [], kubedns: [] }, tcp: { kubedns: [] } };
    for (let round = 0; round < T.rounds; round++) {
      for (const w of ['repeated', 'mix', 'nxdomain']) {
        const c = await dnsperf(ceiling.port, await files[w](), { seconds: T.tput });
        line(`ceiling   ${w}`, c);
        const k = await dnsperf(kd.port, await files[w](), { seconds: T.tput });
        line(`kube-dns  ${w}`, k);
        samples[w].ceiling.push(c);
        samples[w].kubedns.push(k);
      }
      const t = await dnsperf(kd.port, await files.mix(), { seconds: T.tput, tcp: true });
      line('kube-dns  mix over TCP (100 connections)', t);
      samples.tcp.kubedns.push(t);
    }
    const best = (a) => a.reduce((x, y) => (y.qps > x.qps ? y : x));
    const workloads = ['repeated', 'mix', 'nxdomain'].map((w) => {
      const c = best(samples[w].ceiling);
      const k = best(samples[w].kubedns);
      const roundRatios = samples[w].kubedns.map((x, i) => ratio(x.qps, samples[w].ceiling[i].qps));
      return { name: w, kubednsQps: k.qps, ceilingQps: c.qps, ratio: ratio(k.qps, c.qps), roundRatios, lost: k.lost, runs: samples[w] };
    });
    if (T.rounds > 1) for (const x of workloads) say(`  ${x.name}: best ${x.ratio}x the ceiling; round by round ${x.roundRatios.map((r) => `${r}x`).join(', ')}`);
    const mixBest = workloads.find((w) => w.name === 'mix');
    const tcpBest = best(samples.tcp.kubedns);
    out.workloads = workloads;
    out.tcp = { connections: 100, outstanding: 1000, qps: tcpBest.qps, udpQps: mixBest.kubednsQps, ratioToUdp: ratio(tcpBest.qps, mixBest.kubednsQps), runs: samples.tcp.kubedns };

    // --- latency at a fixed rate: half of kube-dns's own maximum on the mix
    // kube-dns and the ceiling take turns, T.slices runs each of T.fixed / T.slices seconds (who
    // goes first alternates), and each side's latencies are pooled: the machine's speed drifts
    // from one minute to the next (a VM shared with others), and with one 60 s run each a slow
    // spell in either run decided the ratio (docs/benchmarks.md).
    // kube-dns's event-loop delay is measured over its own runs at that rate (stallMeter).
    const pair = async (qps) => {
      const k = [];
      const c = [];
      const meter = stallMeter(kd.metrics);
      for (let i = 0; i < T.slices; i++) {
        for (const who of i & 1 ? ['ceiling', 'kubedns'] : ['kubedns', 'ceiling']) {
          const run = async () => dnsperf(who === 'kubedns' ? kd.port : ceiling.port, await files.mix(), { seconds: T.fixed / T.slices, qps });
          const from = performance.now() - kd.startedAt;
          if (who === 'kubedns') k.push(await meter.during(run));
          else c.push(await run());
          if (process.env.KUBEDNS_BENCH_TRACE_GC) say(`  (${who} run ${i + 1} at ${fmt(qps)} qps: ${Math.round(from)}-${Math.round(performance.now() - kd.startedAt)} ms on kube-dns's --trace-gc clock, p99 ${(who === 'kubedns' ? k : c).at(-1).p99Ms} ms)`);
        }
      }
      return { kubedns: pooled(k), ceiling: pooled(c), eventLoop: { rate: qps, ...meter.result(T.fixed) } };
    };
    const halfMax = Math.round(mixBest.kubednsQps / 2);
    say(`\nlatency on the mix at a fixed ${fmt(halfMax)} qps (half kube-dns's maximum), ${T.fixed} s each in ${T.slices} alternating runs:`);
    let { kubedns: kLat, ceiling: cLat, eventLoop } = await pair(halfMax);
    line('kube-dns', kLat);
    line('ceiling', cLat);
    // A reference whose own p99.9 is over CLEAN_MS measures the machine and dnsperf, not a
    // server: on a fast machine half kube-dns's maximum is a rate at which dnsperf itself, sharing
    // the two cores, delays replies by tens of ms (measured: the ceiling alone, p99 0.22 ms at
    // 20,000 qps, 8 ms at 40,000, 23 ms at 64,000; in a 60 s run at 63,551 qps p99 0.68 ms but
    // p99.9 29 ms). The tail is then judged at the highest rate, halving, at which the ceiling's
    // own p99.9 (so its p99 too) is clean; both rates are reported. Clean in the judged runs
    // themselves, not only in the short probe that picks the rate: a probe of 15 s can be clean
    // and the full runs after it not (2026-11-27: p99.9 4.3 ms in the probe, 10.6 ms over the
    // six runs), and a rate is then given up for the next lower one like a probe that failed.
    let rate = halfMax;
    let judgedNote = '';
    const atHalfMax = { kubedns: kLat, ceiling: cLat, eventLoop };
    if (cLat.p999Ms > CLEAN_MS) {
      const probeS = Math.max(5, Math.round(T.fixed / 4));
      for (let r = Math.round(halfMax / 2); r >= 5000; r = Math.round(r / 2)) {
        const c = await dnsperf(ceiling.port, await files.mix(), { seconds: probeS, qps: r });
        line(`ceiling at ${fmt(r)} qps, ${probeS} s (a lower rate for a clean reference)`, c);
        if (c.p999Ms > CLEAN_MS) continue;
        rate = r;
        ({ kubedns: kLat, ceiling: cLat, eventLoop } = await pair(r));
        line(`kube-dns at ${fmt(r)} qps`, kLat);
        line(`ceiling at ${fmt(r)} qps`, cLat);
        if (cLat.p999Ms <= CLEAN_MS) break;
        say(`  the ceiling's own p99.9 over these runs was ${cLat.p999Ms} ms (over ${CLEAN_MS}): not a clean reference either`);
      }
      judgedNote = rate === halfMax
        ? `; the ceiling's own p99.9 stayed over ${CLEAN_MS} ms down to 5,000 qps: the machine sets this tail`
        : `; at ${fmt(rate)} qps: at ${fmt(halfMax)} qps (half the maximum) the ceiling's own p99 / p99.9 were ${atHalfMax.ceiling.p99Ms} / ${atHalfMax.ceiling.p999Ms} ms, kube-dns's ${atHalfMax.kubedns.p99Ms} / ${atHalfMax.kubedns.p999Ms} ms`;
    }
    out.latency = { rate, halfMaxRate: halfMax, seconds: T.fixed, slices: T.slices, kubedns: kLat, ceiling: cLat, ...(rate !== halfMax && { atHalfMax }) };
    const hostDelay = ratio(cLat.p99Ms, cLat.p50Ms);
    out.latency.hostCheck = { ceilingP99OverP50: hostDelay, limit: HOST_BUSY_RATIO, busy: hostDelay > HOST_BUSY_RATIO };
    if (out.latency.hostCheck.busy) say(`  the host was busy: the ceiling's own p99 was ${hostDelay}x its p50 at ${fmt(rate)} qps (over ${HOST_BUSY_RATIO}x; 3-5x on a quiet day here). This run's ratios, saturated and at a fixed rate, measure the host more than kube-dns: run again later`);
    // judged where the latency goals are (the reference clean), with the figure at half the maximum kept
    out.eventLoop = { ...eventLoop, ...(rate !== halfMax && { atHalfMax: atHalfMax.eventLoop }) };
    const loopText = (e) => `max ${e.maxMs} ms, ${e.samplesOver5ms ?? 'n/a'} samples over 5 ms; the loop's thread waited ${e.cpuWaitMs ?? 'n/a'} ms for a CPU in all${stallText(e)}`;
    if (rate !== halfMax && atHalfMax.eventLoop.exported) say(`  kube-dns's event-loop delay in its ${T.fixed} s at ${fmt(halfMax)} qps: ${loopText(atHalfMax.eventLoop)}`);
    say(eventLoop.exported
      ? `  kube-dns's event-loop delay in its ${T.fixed} s at ${fmt(rate)} qps: ${loopText(eventLoop)}`
      : '  event-loop delay: not exported (kubedns_event_loop_delay_max_seconds is not on PROMETHEUS_PORT in this build)');

    // --- the same rate with the client on a core of its own (reported, not judged): how much of
    // the tail above is the scheduler sharing kube-dns's core with dnsperf, which a woken dnsperf
    // takes from it (docs/benchmarks.md, "The client on a core of its own")
    const undoPin = pinApart([kd.p.pid, ceiling.p.pid]);
    if (undoPin) {
      say(`\nthe same ${fmt(rate)} qps with dnsperf on CPU 0 and the servers on CPU 1 (not judged), ${T.slices} alternating runs:`);
      let apart;
      try {
        // scraped as in the judged runs, so that only where the processes run differs
        apart = await pair(rate);
      } finally {
        undoPin();
      }
      line('kube-dns', apart.kubedns);
      line('ceiling', apart.ceiling);
      out.latency.apart = { rate, kubedns: apart.kubedns, ceiling: apart.ceiling, eventLoop: apart.eventLoop, p99Ratio: ratio(apart.kubedns.p99Ms, apart.ceiling.p99Ms), p999Ratio: ratio(apart.kubedns.p999Ms, apart.ceiling.p999Ms) };
      say(`  kube-dns's p99 ${out.latency.apart.p99Ratio}x and p99.9 ${out.latency.apart.p999Ratio}x the ceiling's (sharing the cores above: ${ratio(kLat.p99Ms, cLat.p99Ms)}x and ${ratio(kLat.p999Ms, cLat.p999Ms)}x)`);
    }

    // --- abuse mix (issue 9): normal clients at the same rate, without and with one abusive client
    const wildcardsFlag = /--wildcards\b/.test(await kubeDnsHelp());
    say(`\nabuse mix: the mix at ${fmt(rate)} qps with one service changing every 0.2 s, without and with a client sending wildcard and oversize queries at 100 qps (${wildcardsFlag ? 'kube-dns run with --wildcards' : 'this build has no --wildcards flag: wildcards are answered by default'}):`);
    const kda = await startKubeDns(m, api, configDir, wildcardsFlag ? ['--wildcards'] : []);
    cleanup.push(() => stop(kda.p));
    await dnsperf(kda.port, await files.mix(), { seconds: T.warm });
    let k = 0;
    const churn = setInterval(() => churnOne(api, k++), 200);
    // Without and with the abuser in alternating pairs of runs, judged on the median p99 of each
    // side: on a shared 2-core machine a single hiccup of the host (tens of ms) lands in one run
    // at random, and one long run per side let that decide the verdict either way.
    const runs = { without: [], with: [] };
    let abuseStats;
    try {
      for (let pair = 0; pair < T.abusePairs; pair++) {
        const alone = await dnsperf(kda.port, await files.mix(), { seconds: T.abuse, qps: rate });
        line(`normal clients alone (${pair + 1})`, alone);
        const abuse = await startAbuse(kda.port, 100);
        let abused;
        try {
          abused = await dnsperf(kda.port, await files.mix(), { seconds: T.abuse, qps: rate });
        } finally {
          abuseStats = sumAbuse(abuseStats, await abuse.stop());
        }
        line(`normal clients with the abuser (${pair + 1})`, abused);
        runs.without.push(alone);
        runs.with.push(abused);
      }
      say(`  abuser: ${abuseStats.udpSent} UDP and ${abuseStats.tcpSent} TCP queries, ${abuseStats.udpReplies} + ${abuseStats.tcpReplies} replies, ${abuseStats.truncated} truncated, largest UDP ${abuseStats.maxUdpBytes} B, TCP ${abuseStats.maxTcpBytes} B, TCP connections lost ${abuseStats.tcpErrors}`);
    } finally {
      clearInterval(churn);
    }
    await stop(kda.p);
    const base = medianRun(runs.without);
    const abused = medianRun(runs.with);
    say(`  median p99: ${base.p99Ms} ms alone, ${abused.p99Ms} ms with the abuser (${ratio(abused.p99Ms, base.p99Ms)}x)`);
    out.abuse = { rate, seconds: T.abuse, pairs: T.abusePairs, wildcardsFlag, churnEveryMs: 200, without: base, with: abused, runs, abuser: abuseStats };

    // --- the pod: dnsmasq in front (nanny, sidecar, the manifest's arguments) vs a bare dnsmasq
    say('\nthe pod: repeated external names answered from dnsmasq\'s cache:');
    const pod = await startPod(m, kd, configDir, work);
    cleanup.push(() => Promise.all(pod.procs.map((p) => stop(p, 4000))));
    const bare = await startBareDnsmasq(m, upstream.port);
    cleanup.push(() => stop(bare.p));
    const ext = await externalFile(join(work, 'external.txt'));
    await dnsperf(pod.port, ext, { seconds: 1 });
    await dnsperf(bare.port, ext, { seconds: 1 });
    const podRuns = { pod: [], bare: [] };
    for (let round = 0; round < T.rounds; round++) {
      const b = await dnsperf(bare.port, ext, { seconds: T.pod });
      line('bare dnsmasq (same cache settings)', b);
      const p = await dnsperf(pod.port, ext, { seconds: T.pod });
      line('the pod\'s dnsmasq (nanny, kube-dns, sidecar)', p);
      podRuns.bare.push(b);
      podRuns.pod.push(p);
    }
    if (T.rounds > 1) say(`  round by round ${podRuns.pod.map((x, i) => `${ratio(x.qps, podRuns.bare[i].qps)}x`).join(', ')}`);
    out.pod = { podQps: best(podRuns.pod).qps, bareQps: best(podRuns.bare).qps, ratio: ratio(best(podRuns.pod).qps, best(podRuns.bare).qps), runs: podRuns };

    // --- goals
    const w = Object.fromEntries(workloads.map((x) => [x.name, x]));
    const goals = [
      { goal: 'repeated names >= 0.9x the ceiling', value: w.repeated.ratio, limit: 0.9, met: w.repeated.ratio >= 0.9, detail: `${fmt(w.repeated.kubednsQps)} vs ${fmt(w.repeated.ceilingQps)} qps` },
      { goal: 'realistic mix >= 0.75x the ceiling', value: w.mix.ratio, limit: 0.75, met: w.mix.ratio >= 0.75, detail: `${fmt(w.mix.kubednsQps)} vs ${fmt(w.mix.ceilingQps)} qps` },
      { goal: 'TCP (100 connections) >= 0.8x UDP on the mix', value: out.tcp.ratioToUdp, limit: 0.8, met: out.tcp.ratioToUdp >= 0.8, detail: `${fmt(out.tcp.qps)} vs ${fmt(out.tcp.udpQps)} qps` },
      { goal: 'pod (dnsmasq in front) >= 95% of a bare dnsmasq', value: out.pod.ratio, limit: 0.95, met: out.pod.ratio >= 0.95, detail: `${fmt(out.pod.podQps)} vs ${fmt(out.pod.bareQps)} qps` },
      cleanOnly(latencyGoal(`p99 at ${fmt(rate)} qps <= 1.5x the ceiling's`, kLat, cLat, 'p99Ms', 1.5, 'the ceiling', judgedNote), cLat),
      cleanOnly(latencyGoal(`p99.9 at ${fmt(rate)} qps <= 2x the ceiling's`, kLat, cLat, 'p999Ms', 2, 'the ceiling', judgedNote), cLat),
      eventLoop.exported && eventLoop.maxMs !== undefined
        ? stallGoal({ goal: `no event-loop stall over 5 ms (${T.fixed} s at ${fmt(rate)} qps)`, value: eventLoop.maxMs, unit: ' ms', limit: 5, met: eventLoop.maxMs < 5, detail: `max ${eventLoop.maxMs} ms${stallText(eventLoop)}${rate !== halfMax && atHalfMax.eventLoop.exported ? `; at ${fmt(halfMax)} qps (half the maximum) max ${atHalfMax.eventLoop.maxMs} ms${stallText(atHalfMax.eventLoop)}` : ''}` }, cLat)
        : { goal: `no event-loop stall over 5 ms (${T.fixed} s run)`, met: null, detail: 'not exported by this build' },
      latencyGoal('abuse: median p99 of normal clients <= 2x without the abuser', abused, base, 'p99Ms', 2, 'the median run without the abuser', wildcardsFlag ? ', --wildcards' : ''),
    ];
    out.goals = goals;
    say('\ngoals:');
    for (const g of goals) say(`  ${g.met === null ? 'n/a    ' : g.met ? 'met    ' : 'NOT met'}  ${g.goal.padEnd(52)} ${g.value !== undefined ? `${g.value}${g.unit ?? 'x'}  ` : ''}(${g.detail})`);
    say(`  for comparison: unique NXDOMAIN names ${w.nxdomain.ratio}x the ceiling (${fmt(w.nxdomain.kubednsQps)} vs ${fmt(w.nxdomain.ceilingQps)} qps), no goal of its own`);
  } finally {
    for (const f of cleanup.reverse()) await f().catch(() => {});
    await rm(work, { recursive: true, force: true });
  }
  out.machine.loadavgAtEnd = loadavg().map((x) => +x.toFixed(2));
  out.elapsedSeconds = Math.round((Date.now() - t0) / 1000);
  const all = await writeSection('dns', out);
  await writeFile(join(RESULTS_DIR, 'latest.svg'), drawSvg(all));
  say(`\nwritten: ${LATEST.slice(root.length)} and ${join(RESULTS_DIR, 'latest.svg').slice(root.length)} (${out.elapsedSeconds} s)`);

  await afterDns();
}

// The headless churn, memory and reliability have scripts and results of their own
// (scripts/bench-headless-churn.mjs, section "churn"; scripts/bench-footprint.mjs,
// bench/results/footprint.json; scripts/bench-reliability.mjs, section "reliability"), run after
// this one with the same --quick; --soak MINUTES goes to the reliability script.
async function runScript(name, args) {
  say('');
  const p = start(process.execPath, [join(root, 'scripts', name), ...(quick ? ['--quick'] : []), ...args], { stdout: 'inherit', stderr: 'inherit' });
  const code = await new Promise((r) => p.once('exit', r));
  if (code !== 0) throw new Error(`scripts/${name} exited with ${code}`);
}

async function afterDns() {
  if (process.argv.includes('--dns-only')) return; // comparing builds or flags: the DNS figures alone
  await runScript('bench-headless-churn.mjs', []);
  await runScript('bench-footprint.mjs', []);
  const soakAt = process.argv.indexOf('--soak');
  await runScript('bench-reliability.mjs', soakAt > 0 ? ['--soak', process.argv[soakAt + 1]] : []);
}

main().then(() => process.exit(0), (e) => { console.error(`bench failed: ${e.stack ?? e.message}`); killAllNow(); process.exit(1); });
