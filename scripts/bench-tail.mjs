#!/usr/bin/env node
// Where kube-dns's tail latency at a fixed rate comes from: a diagnostic, not part of `npm run
// bench` (it prints, and writes nothing to bench/results). Four servers take turns at the same
// rate on the bench's mix, each run followed by the next server's, the order reversed every round:
//   kube-dns        as the manifest runs it (2,000 Services in the test kit's API server)
//   kd-process      kube-dns's process with its DNS listener answering as the ceiling does
//                   (scripts/bench-tail-preload.cjs): everything of kube-dns but the answering
//   ceiling         the bench's ceiling (scripts/bench-ceiling.cjs)
//   ceiling+busy    the ceiling spending --busy-us of CPU per query before answering: kube-dns's
//                   cost per query without its work
//   kd-process+busy kd-process spending --busy-us per query before it answers (named in --servers):
//                   what the CPU of kube-dns's answering alone costs, in kube-dns's own process
//   kube-dns+env    kube-dns under the env --kd-env gives over the manifest's and the image's
//                   (named in --servers): another allocator or its options, for one; e.g. glibc's
//                   malloc: --kd-env LD_PRELOAD=<the checkout>/images/preload/bundle/drop-symbol-tables.so
// and, named in --servers, the ceiling given one thing of kube-dns's process at a time
// (scripts/bench-ceiling.cjs, CEILING_PRELUDES), all under kube-dns's env from the manifest
// over the images' (scripts/image-env.mjs):
//   ceiling+env     kube-dns's NODE_OPTIONS, MALLOC_TRIM_THRESHOLD_, the images' LD_PRELOAD and
//                   --no-parallel-scavenge
//   ceiling+heap    that, and a zone-sized heap held for the process's life
//   ceiling+malloc  that, and a malloc heap with holes, as kube-dns's is after its sync
//   ceiling+gcobs   that, and an observer of every garbage collection (perf_hooks)
//   ceiling+timers  that, and kube-dns's periodic timers and event-loop delay monitor
// For each run: dnsperf's p50 / p99 / p99.9, from /proc the server's main thread (CPU per query,
// time it waited for a CPU, involuntary context switches) and its other threads' CPU, and
// dnsperf's own CPU per query; for kube-dns's processes its largest event-loop delay and stalls
// over 5 ms, scraped as the bench does. With KUBEDNS_BENCH_PIN=1 (scripts/bench-procs.mjs) dnsperf runs on
// CPU 0 and the servers on CPU 1: the split without the client on the server's core.
// --saturate S --saturated a,b gives the named servers, before the timed rounds, what the full
// bench gives kube-dns before its fixed-rate runs (three rounds of S s of each throughput run):
// a server fresh from its warm-up against one after minutes at full speed.
// --placement: during each run, every 10 ms, the CPU each thread last ran on (/proc/.../stat) for
// the server's main thread and dnsperf's threads; printed per run for each dnsperf thread that
// used 0.2 s of CPU or more: its CPU time and the share of samples it was on the server's CPU.
// The sampling costs this process some CPU, the same for every server.
// --scavenges: every server runs with V8's --trace-gc (a line written per collection, in every
// run of every server alike), and each run prints how many of its clusters of slow replies (at or
// over the run's p99) begin inside one of the server's scavenges (scavengeClusters below).
// How to read it: docs/benchmarks.md, "Where a tail comes from"; what it found: docs/hot-path.md,
// "Splitting the gap" and "What the tail is made of at the judged rate".
//   node scripts/bench-tail.mjs [--rate QPS] [--seconds S] [--rounds N] [--busy-us US] [--servers a,b,...] [--kd-env 'NAME=VALUE ...'] [--saturate S --saturated a,b] [--placement] [--scavenges]
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { freePort } from '@kube-dns/testkit';
import { CEILING_PRELUDES, ceilingProgram } from './bench-ceiling.cjs';
import { dnsperf, loopMetrics, manifestArgs, pooled, sleep, start, startKubeDns, stop } from './bench-procs.mjs';
import { mixFile, nxdomainFile, repeatedFile, startBenchCluster } from './bench-workloads.mjs';

const { values: opt } = parseArgs({
  options: {
    rate: { type: 'string', default: '20000' },
    seconds: { type: 'string', default: '10' },
    rounds: { type: 'string', default: '4' },
    'busy-us': { type: 'string', default: '4' },
    servers: { type: 'string', default: 'kube-dns,kd-process,ceiling,ceiling+busy' },
    'kd-env': { type: 'string', default: '' },
    saturate: { type: 'string', default: '0' },
    placement: { type: 'boolean', default: false },
    scavenges: { type: 'boolean', default: false },
    saturated: { type: 'string', default: '' },
  },
});
const RATE = Number(opt.rate);
const SECONDS = Number(opt.seconds);
const ROUNDS = Number(opt.rounds);
const BUSY_US = Number(opt['busy-us']);
const SERVERS = opt.servers.split(',');
// --saturate S --saturated a,b: before the timed rounds, the named servers get what the full bench
// gives kube-dns before its fixed-rate runs: three rounds of S s each of the repeated names, the mix
// and unique NXDOMAIN names at full speed, and of the mix over TCP (100 connections)
const SATURATE = Number(opt.saturate);
const SATURATED = opt.saturated.split(',').filter(Boolean);
for (const name of SATURATED) if (!SERVERS.includes(name)) usageError(`--saturated: "${name}" is not one of --servers (${opt.servers})`);
// --kd-env 'NAME=VALUE ...': the env kube-dns+env runs under, over the manifest's and the image's
const KD_ENV = Object.fromEntries(opt['kd-env'].split(/\s+/).filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const KNOWN = ['kube-dns', 'kube-dns+env', 'kd-process', 'kd-process+busy', 'ceiling', 'ceiling+busy', ...Object.keys(CEILING_PRELUDES).map((k) => `ceiling+${k}`)];
/** A usage error: one line saying what is wrong, no stack, exit 2. */
function usageError(msg) {
  process.stderr.write(`bench-tail: ${msg}\n`);
  process.exit(2);
}
for (const name of SERVERS) if (!KNOWN.includes(name)) usageError(`--servers: no server "${name}"; one of ${KNOWN.join(', ')}`);
if (SERVERS.includes('kube-dns+env') !== Object.keys(KD_ENV).length > 0) usageError('--kd-env and the server kube-dns+env go together');
if (Object.keys(KD_ENV).some((k) => !/^[A-Za-z_][A-Za-z0-9_]*$/.test(k))) usageError(`--kd-env: NAME=VALUE pairs separated by spaces expected, not ${opt['kd-env']} (a value cannot hold a space: kube-dns's node flags go in KUBEDNS_BENCH_NODE_OPTIONS)`);
if (new Set(SERVERS).size !== SERVERS.length) usageError(`--servers: a server named twice (${opt.servers})`);
for (const [k, v] of [['rate', RATE], ['seconds', SECONDS], ['rounds', ROUNDS], ['busy-us', BUSY_US], ['saturate', SATURATE]]) {
  if (!Number.isFinite(v) || v < 0 || (k !== 'busy-us' && k !== 'saturate' && v === 0)) usageError(`--${k}: a positive number expected, not ${opt[k]}`);
}

if (SATURATED.length > 0 !== SATURATE > 0) usageError('--saturate S and --saturated a,b go together');

/** Per thread of `pid`: CPU and run-queue wait (ns, schedstat), context switches. */
function threads(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const [run, wait] = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8');
      const invol = Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)[1]);
      // moves to another CPU (the scheduler's count; a moved thread finds its caches cold)
      const migr = Number(/se\.nr_migrations\s+:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/task/${tid}/sched`, 'utf8'))?.[1] ?? NaN);
      out.set(tid, { run, wait, invol, migr });
    } catch {
      /* the thread ended meanwhile */
    }
  }
  return out;
}

/** What the server's threads did between two readings. */
function threadDelta(pid, a, b) {
  const main = String(pid);
  const d = (k) => b.get(main)[k] - a.get(main)[k];
  let helpersNs = 0;
  for (const [tid, t] of b) if (tid !== main && a.has(tid)) helpersNs += t.run - a.get(tid).run;
  return { mainMs: d('run') / 1e6, waitMs: d('wait') / 1e6, invol: d('invol'), migr: d('migr'), helpersMs: helpersNs / 1e6 };
}

/**
 * CPU (ms) of this process's children that have ended and been waited for: dnsperf's, read around
 * one run (/proc/self/stat, cutime + cstime, in clock ticks of 10 ms). What the client spent on a
 * server's replies is part of what sharing two cores with it costs.
 */
function childrenCpuMs() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[13]) + Number(f[14])) * 10;
}

/**
 * kube-dns's largest event-loop delay and its stalls over 5 ms during one run, as the bench reads
 * them (docs/benchmarks.md, "Event-loop stalls"): a scrape as the run starts (it resets the
 * gauge), one every 5 s, one at the end.
 */
function loopDelays(port) {
  const scrape = () => fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '').then(loopMetrics);
  let maxMs = 0;
  const first = scrape();
  const timer = setInterval(() => void scrape().then((m) => (maxMs = Math.max(maxMs, (m.max ?? 0) * 1000))), 5000);
  return {
    async end() {
      clearInterval(timer);
      const [a, b] = [await first, await scrape()];
      return { maxMs: Math.max(maxMs, (b.max ?? 0) * 1000), cpuWait: b.stallsCpuWait - a.stallsCpuWait, own: b.stallsProcess - a.stallsProcess };
    },
  };
}

/** A thread's last CPU and its CPU time in clock ticks (/proc/<pid>/task/<tid>/stat), or undefined. */
function lastCpu(pid, tid) {
  try {
    const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { cpu: Number(f[36]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return undefined; // the thread or the process ended
  }
}

/** A process's command name, or undefined when it has ended. */
function commOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Samples, every 10 ms until end() is called, on which CPU the server's main thread and each of
 * dnsperf's threads last ran: where the scheduler puts the client against the server. end():
 * for each dnsperf thread busy for 20 ticks (0.2 s) or more, its ticks and its share of samples on
 * the server's CPU.
 */
function placement(serverPid) {
  const per = new Map();
  let stopped = false;
  let pid;
  const done = (async () => {
    for (let i = 0; i < 50 && !pid && !stopped; i++) {
      pid = readdirSync('/proc').find((d) => /^\d+$/.test(d) && commOf(d) === 'dnsperf');
      if (!pid) await sleep(10);
    }
    while (pid && !stopped) {
      const k = lastCpu(serverPid, serverPid);
      let tids = [];
      try {
        tids = readdirSync(`/proc/${pid}/task`);
      } catch {
        break; // dnsperf ended
      }
      for (const tid of tids) {
        const x = lastCpu(pid, tid);
        if (!x || !k) continue;
        const e = per.get(tid) ?? { same: 0, n: 0, t0: x.ticks, t1: x.ticks };
        e.n++;
        if (x.cpu === k.cpu) e.same++;
        e.t1 = x.ticks;
        per.set(tid, e);
      }
      await sleep(10);
    }
  })();
  return {
    async end() {
      stopped = true;
      await done;
      if (!pid) return undefined; // dnsperf not seen within 0.5 s: said so, not an empty list
      return [...per.values()].filter((e) => e.t1 - e.t0 >= 20).map((e) => ({ ticks: e.t1 - e.t0, sameCpu: e.same / e.n }));
    },
  };
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
const pad = (s, n) => String(s).padEnd(n);

/** Slow replies with at most this many others between them belong to one cluster. */
const CLUSTER_GAP = 20;

/**
 * How many of one run's clusters of slow replies begin inside one of the server's scavenges.
 * `inOrder`: the replies' latencies (ms) in the order dnsperf got them. dnsperf sends at a fixed
 * rate, so a reply's place in that order over the rate is close to when it was sent. Slow: at or
 * over the run's p99. `trace`: the server's --trace-gc output, in ms since its V8 started;
 * `fromMs`: when the run started, in ms since the server was spawned. The two clocks differ by
 * the time node takes to start V8 (tens of ms), so the offset that matches the most clusters is
 * fitted, from -150 to +50 ms. A cluster matches when it begins between half a millisecond
 * before a scavenge and a millisecond after its pause. `chance`: the matches expected if the
 * clusters began anywhere, the share of the run the windows cover times the clusters (the fit
 * adds a few to that).
 */
function scavengeClusters(inOrder, p99Ms, trace, fromMs) {
  const gcs = [];
  for (const m of trace.matchAll(/\s(\d+) ms: Scavenge\b.*?MB, ([\d.]+) \/ [\d.]+ ms/g)) gcs.push({ t: Number(m[1]), pauseMs: Number(m[2]) });
  const runMs = SECONDS * 1000;
  const inRun = gcs.filter((g) => g.t >= fromMs - 200 && g.t <= fromMs + runMs + 200);
  const starts = [];
  let last = -Infinity;
  for (let i = 0; i < inOrder.length; i++) {
    if (inOrder[i] < p99Ms) continue;
    if (i - last > CLUSTER_GAP) starts.push(fromMs + (i * 1000) / RATE);
    last = i;
  }
  let matched = 0;
  for (let off = -150; off <= 50; off++) {
    let hits = 0;
    let g = 0;
    for (const t of starts) {
      const x = t + off;
      while (g < inRun.length && inRun[g].t + inRun[g].pauseMs + 1 < x) g++;
      if (g < inRun.length && x >= inRun[g].t - 0.5) hits++;
    }
    matched = Math.max(matched, hits);
  }
  const covered = inRun.reduce((a, g) => a + g.pauseMs + 1.5, 0) / runMs;
  const pauses = inRun.map((g) => g.pauseMs).sort((a, b) => a - b);
  return { scavenges: inRun.length, medianPauseMs: pauses.length ? pauses[pauses.length >> 1] : 0, clusters: starts.length, matched, chance: Math.round(covered * starts.length) };
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'kube-dns-tail-'));
  const stops = [];
  try {
    const m = await manifestArgs();
    const { api, cluster, configDir } = await startBenchCluster(work, stops);

    const startCeiling = async (busyUs, prelude, name) => {
      const port = await freePort();
      // a variant with a prelude runs under kube-dns's env (NODE_OPTIONS, MALLOC_TRIM_THRESHOLD_)
      const env = prelude ? m.env.kubedns : {};
      const traceFile = opt.scavenges ? join(work, `gc-${name}`) : undefined;
      const fd = traceFile ? openSync(traceFile, 'w') : undefined;
      const startedAt = performance.now();
      const p = start(process.execPath, [...(traceFile ? ['--trace-gc'] : []), '-e', ceilingProgram(busyUs, prelude), String(port)], { env, ...(fd !== undefined && { stdout: fd }) });
      if (fd !== undefined) closeSync(fd);
      stops.push(() => stop(p));
      for (let t0 = Date.now(); !p.tail.includes('ready'); await sleep(50)) {
        if (p.exitCode !== null || Date.now() - t0 > 10_000) throw new Error(`the ceiling did not start: ${p.tail}`);
      }
      return { pid: p.pid, port, startedAt, traceFile };
    };
    // the child's env is this process's (bench-procs.mjs, start()): set for its start, then put back
    const withEnv = async (vars, run) => {
      const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
      Object.assign(process.env, vars);
      try {
        return await run();
      } finally {
        for (const [k, v] of Object.entries(before)) {
          if (v === undefined) delete process.env[k];
          else process.env[k] = v;
        }
      }
    };
    const startKd = (name, preload, busyUs = 0, env = {}) => {
      const base = process.env.KUBEDNS_BENCH_NODE_OPTIONS ?? m.env.kubedns.NODE_OPTIONS ?? '';
      const vars = {
        ...(preload && { KUBEDNS_BENCH_NODE_OPTIONS: `${base} --require ${new URL('./bench-tail-preload.cjs', import.meta.url).pathname}`, KUBEDNS_TAIL_BUSY_US: String(busyUs) }),
        // startKubeDns's trace (scripts/bench-procs.mjs): the file it names is returned
        ...(opt.scavenges && { KUBEDNS_BENCH_TRACE_GC: join(work, `gc-${name}`) }),
      };
      return withEnv(vars, async () => {
        const kd = await startKubeDns({ ...m, env: { ...m.env, kubedns: { ...m.env.kubedns, ...env } } }, api, configDir);
        stops.push(() => stop(kd.p));
        return { pid: kd.p.pid, port: kd.port, metrics: kd.metrics, startedAt: kd.startedAt, traceFile: kd.traceFile };
      });
    };
    const kinds = {
      'kube-dns': () => startKd('kube-dns', false),
      'kube-dns+env': () => startKd('kube-dns+env', false, 0, KD_ENV),
      'kd-process': () => startKd('kd-process', true),
      'kd-process+busy': () => startKd('kd-process+busy', true, BUSY_US),
      ceiling: () => startCeiling(0, undefined, 'ceiling'),
      'ceiling+busy': () => startCeiling(BUSY_US, undefined, 'ceiling+busy'),
      ...Object.fromEntries(Object.entries(CEILING_PRELUDES).map(([k, prelude]) => [`ceiling+${k}`, () => startCeiling(0, prelude, `ceiling+${k}`)])),
    };
    const servers = [];
    for (const name of SERVERS) {
      servers.push({ kind: name, name: name.endsWith('+busy') ? name.replace('+busy', `+${BUSY_US}us`) : name, ...(await kinds[name]()) });
    }
    let salt = 0;
    const mix = () => mixFile(cluster, join(work, `mix-${++salt}.txt`), salt);
    for (const s of servers) await dnsperf(s.port, await mix(), { seconds: 4 }); // JIT, caches
    for (const s of servers.filter((x) => SATURATED.includes(x.kind))) {
      for (let round = 0; round < 3; round++) {
        await dnsperf(s.port, await repeatedFile(cluster, join(work, 'repeated.txt')), { seconds: SATURATE });
        await dnsperf(s.port, await mix(), { seconds: SATURATE });
        await dnsperf(s.port, await nxdomainFile(join(work, `nx-${++salt}.txt`), salt), { seconds: SATURATE });
        await dnsperf(s.port, await mix(), { seconds: SATURATE, tcp: true });
      }
      process.stdout.write(`  ${s.name}: saturated for ${12 * SATURATE} s\n`);
    }
    process.stdout.write(`the mix at ${RATE} qps, ${ROUNDS} rounds of ${SECONDS} s per server, taking turns\n`);
    const runs = new Map(servers.map((s) => [s.name, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of round & 1 ? [...servers].reverse() : servers) {
        const file = await mix();
        const a = threads(s.pid);
        const c0 = childrenCpuMs();
        const loop = s.metrics ? loopDelays(s.metrics) : undefined;
        const place = opt.placement ? placement(s.pid) : undefined;
        const fromMs = performance.now() - s.startedAt;
        const r = await dnsperf(s.port, file, { seconds: SECONDS, qps: RATE, inOrder: opt.scavenges });
        const t = threadDelta(s.pid, a, threads(s.pid));
        if (opt.scavenges) t.gc = scavengeClusters(r.inOrder, r.p99Ms, readFileSync(s.traceFile, 'utf8'), fromMs);
        const placed = place ? ((await place.end()) ?? 'dnsperf not found') : undefined;
        t.loop = await loop?.end();
        t.clientUs = ((childrenCpuMs() - c0) * 1000) / r.samples;
        runs.get(s.name).push({ r, t });
        process.stdout.write(`  ${pad(s.name, 16)} p50 ${pad(r.p50Ms, 6)} p99 ${pad(r.p99Ms, 6)} p99.9 ${pad(r.p999Ms, 7)}` +
          ` main thread ${(t.mainMs * 1000 / r.samples).toFixed(1)} us/query, waited ${t.waitMs.toFixed(0)} ms for a CPU, ${t.invol} involuntary switches, ${t.migr} moves to another CPU; other threads ${t.helpersMs.toFixed(0)} ms; dnsperf ${t.clientUs.toFixed(1)} us/query` +
          (t.loop ? `; loop delay max ${t.loop.maxMs.toFixed(2)} ms, stalls over 5 ms: ${t.loop.cpuWait} waiting for a CPU, ${t.loop.own} its own` : '') +
          (t.gc ? `; ${t.gc.scavenges} scavenges (median pause ${t.gc.medianPauseMs} ms), slow replies in ${t.gc.clusters} clusters, ${t.gc.matched} beginning in a scavenge (${t.gc.chance} by chance)` : '') +
          (typeof placed === 'string' ? `; placement: ${placed}` : '') +
          (Array.isArray(placed) ? `; dnsperf's busy threads (CPU s, share of samples on the server's CPU): ${placed.map((x) => `${(x.ticks / 100).toFixed(2)} s ${Math.round(x.sameCpu * 100)}%`).join(', ')}` : '') + '\n');
      }
    }
    process.stdout.write('\nper server: median of the runs\' p99 (ms), pooled p50 / p99 / p99.9, and per run on average: main thread us/query, CPU wait ms, involuntary switches, moves to another CPU, other threads ms, dnsperf us/query\n');
    for (const [name, rs] of runs) {
      const p = pooled(rs.map((x) => x.r));
      const avg = (f) => rs.reduce((acc, x) => acc + f(x), 0) / rs.length;
      const loops = rs.map((x) => x.t.loop).filter(Boolean);
      process.stdout.write(`  ${pad(name, 16)} ${pad(median(rs.map((x) => x.r.p99Ms)), 7)} ${p.p50Ms} / ${p.p99Ms} / ${p.p999Ms}` +
        `   ${avg((x) => (x.t.mainMs * 1000) / x.r.samples).toFixed(1)} us, ${avg((x) => x.t.waitMs).toFixed(0)} ms, ${avg((x) => x.t.invol).toFixed(0)}, ${avg((x) => x.t.migr).toFixed(0)}, ${avg((x) => x.t.helpersMs).toFixed(0)} ms, ${avg((x) => x.t.clientUs).toFixed(1)} us` +
        (loops.length ? `; loop delay max ${Math.max(...loops.map((l) => l.maxMs)).toFixed(2)} ms, stalls over 5 ms ${loops.reduce((n, l) => n + l.cpuWait, 0)} waiting / ${loops.reduce((n, l) => n + l.own, 0)} own` : '') +
        (opt.scavenges ? `; ${rs.reduce((n, x) => n + x.t.gc.matched, 0)} of ${rs.reduce((n, x) => n + x.t.gc.clusters, 0)} slow clusters began in one of ${rs.reduce((n, x) => n + x.t.gc.scavenges, 0)} scavenges (${rs.reduce((n, x) => n + x.t.gc.chance, 0)} by chance)` : '') + '\n');
    }
  } finally {
    for (const f of stops.reverse()) await f();
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${e.stack ?? e}\n`);
  process.exit(1);
});
