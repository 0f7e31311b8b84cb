// Processes for the bench scripts: children in their own process groups (killed however the
// bench exits), kube-dns started with the manifest's arguments on loopback ports, and dnsperf with
// its figures parsed. Shared by scripts/bench.mjs, scripts/bench-tail.mjs and scripts/bench-reliability.mjs.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, createReadStream, openSync, readdirSync, readFileSync, unlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism, constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { freePort } from '@kube-dns/testkit';
import yaml from 'js-yaml';
import { imageEnv } from './image-env.mjs';

const root = new URL('..', import.meta.url).pathname;

// The bench's own process shares the two cores with the server it measures, so its collector must
// not run inside a timed run. Writing a run's query file (a string per line, promoted by a dozen
// scavenges) and parsing the last run's replies leave a few hundred MB of garbage in the old
// space, and V8's memory reducer collected it some seconds later, in the middle of the next run:
// a 23 ms pause of this process on one core, its collector's helper threads on the other, and the
// measured server's woken thread waiting up to 5 ms for a CPU (perf sched; docs/benchmarks.md,
// "The bench's own collector"). So the bench runs with the reducer off (V8 reads the flag when it
// sets up the heap: a command-line flag, hence this re-exec of the script) and collects its
// garbage itself right before each fixed-rate run (collectOwnGarbage, from --expose-gc).
const HARNESS_FLAGS = ['--no-memory-reducer', '--expose-gc'];
if (!HARNESS_FLAGS.every((f) => process.execArgv.includes(f))) {
  const bench = spawn(process.execPath, [...HARNESS_FLAGS, ...process.execArgv, ...process.argv.slice(1)], { stdio: 'inherit' });
  // a signal sent to this pid alone (a timeout's kill) reaches the bench, which cleans up its children
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => bench.kill(sig));
  const [code, signal] = await once(bench, 'exit');
  process.exit(code ?? 128 + (osConstants.signals[signal] ?? 1));
}
/** V8's full collection of this process (a bare call: this node ignores gc()'s options). */
const collectOwnGarbage = globalThis.gc;
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Processes. Each child leads its own process group (dnsmasq under the nanny included), so one
// kill reaches everything it started; whatever is left when the bench exits, however it exits,
// is killed by group id.
const children = new Set();

// KUBEDNS_BENCH_PIN=1: dnsperf runs on CPU 0 and every other child (kube-dns, the ceiling, the pod)
// on CPU 1 (taskset execs the command, so the pid is the server's). On two shared cores the
// scheduler otherwise decides how much of a core each side gets, and a ratio then measures that as
// much as the code.
export const PIN = process.env.KUBEDNS_BENCH_PIN === '1';
/** Set by pinApart() while its series runs: dnsperf is then started on CPU 0. */
let clientApart = false;

export function start(cmd, args, opts = {}) {
  if (PIN) [cmd, args] = ['taskset', ['-c', cmd === 'dnsperf' ? '0' : '1', cmd, ...args]];
  else if (clientApart && cmd === 'dnsperf') [cmd, args] = ['taskset', ['-c', '0', cmd, ...args]];
  const p = spawn(cmd, args, { detached: true, stdio: ['ignore', opts.stdout ?? 'ignore', opts.stderr ?? 'pipe'], env: { ...process.env, ...opts.env } });
  children.add(p);
  p.tail = '';
  p.stderr?.on('data', (d) => (p.tail = (p.tail + d).slice(-4000)));
  p.on('exit', () => children.delete(p));
  p.on('error', (e) => {
    p.failed = e; // could not start: 'exit' may never come
    p.tail += `\n${e.message}`;
  });
  return p;
}

/**
 * Moves running servers (every thread of each pid) to CPU 1 and has the dnsperf runs started
 * from now on run on CPU 0, until the returned function puts each server's threads back on the
 * CPUs they had. For a series that shows what sharing a core with the client costs a server:
 * the bench's judged runs leave the split of the two cores to the scheduler
 * (docs/benchmarks.md, "The client on a core of its own"). Undefined when there is nothing to
 * do: under KUBEDNS_BENCH_PIN=1 everything is pinned already, one CPU cannot be split, and
 * without taskset nothing can be moved.
 */
export function pinApart(pids) {
  if (PIN || availableParallelism() < 2) return undefined;
  const taskset = (args) => execFileSync('taskset', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  let masks;
  try {
    // "pid 123's current affinity mask: 3"
    masks = pids.map((pid) => /:\s*([0-9a-f,]+)\s*$/.exec(taskset(['-p', String(pid)]))[1]);
  } catch {
    return undefined; // no taskset (util-linux) here
  }
  const undo = () => {
    clientApart = false;
    pids.forEach((pid, i) => taskset(['-a', '-p', masks[i], String(pid)]));
  };
  try {
    for (const pid of pids) taskset(['-a', '-p', '-c', '1', String(pid)]);
  } catch (e) {
    undo(); // none of the bench's later runs may find a server left pinned
    throw e;
  }
  clientApart = true;
  return undo;
}

/** The pids of a process's children (/proc), [] once it is gone. */
export function childPids(pid) {
  const out = [];
  let tasks = [];
  try { tasks = readdirSync(`/proc/${pid}/task`); } catch { /* gone */ }
  for (const task of tasks) {
    let c = '';
    try { c = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8'); } catch { /* gone */ }
    out.push(...c.split(/\s+/).filter(Boolean).map(Number));
  }
  return out;
}

/**
 * SIGTERM to the process's group, SIGKILL after graceMs; then the groups of its children, which a
 * child may have left (the nanny runs dnsmasq in a group of its own, and a nanny killed during
 * its 5 s lameduck left dnsmasq running after the bench).
 */
export async function stop(p, graceMs = 2000) {
  if (!p || p.exitCode !== null || p.signalCode !== null) return;
  const children = childPids(p.pid);
  const exited = new Promise((r) => p.once('exit', r));
  try { process.kill(-p.pid, 'SIGTERM'); } catch { /* already gone */ }
  if (!(await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]))) {
    try { process.kill(-p.pid, 'SIGKILL'); } catch { /* already gone */ }
    await exited;
  }
  for (const pid of children) try { process.kill(-pid, 'SIGKILL'); } catch { /* gone, or not a group leader */ }
}

export function killAllNow() {
  for (const p of children) try { process.kill(-p.pid, 'SIGKILL'); } catch { /* already gone */ }
}
process.on('exit', killAllNow);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { killAllNow(); process.exit(130); });

// ---------------------------------------------------------------------------------------------
// The manifest's container arguments, read from manifests/kube-dns.yaml so the bench follows it.
export async function manifestArgs() {
  // parsed as YAML (as scripts/bench-footprint.mjs does): quoting, comments and layout are the
  // manifest's business, not a line pattern's
  const docs = yaml.loadAll(await readFile(join(root, 'manifests', 'kube-dns.yaml'), 'utf8'));
  const pod = docs.find((d) => d?.kind === 'Deployment' && d.metadata?.name === 'kube-dns')?.spec?.template?.spec;
  if (!pod) throw new Error('manifests/kube-dns.yaml: no Deployment kube-dns');
  const container = (name) => {
    const c = pod.containers.find((x) => x.name === name);
    if (!c?.args) throw new Error(`manifests/kube-dns.yaml: no args for container ${name}`);
    return c;
  };
  // the container's env entries with a literal value (NODE_OPTIONS, MALLOC_TRIM_THRESHOLD_, ...;
  // not the Downward API ones) over the image's (LD_PRELOAD, ...): the processes run as the
  // manifest and the images run them
  const envOf = (name, image) => {
    const env = Object.fromEntries((container(name).env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, String(e.value)]));
    if (env.NODE_OPTIONS === undefined) throw new Error(`manifests/kube-dns.yaml: no NODE_OPTIONS for container ${name}`);
    return { ...imageEnv(image), ...env };
  };
  const args = (name) => container(name).args.map(String);
  const dnsmasq = args('dnsmasq');
  const dd = dnsmasq.indexOf('--');
  return {
    kubedns: args('kubedns'),
    nanny: dnsmasq.slice(0, dd),
    dnsmasq: dnsmasq.slice(dd + 1),
    sidecar: args('sidecar'),
    env: { kubedns: envOf('kubedns', 'kube-dns'), nanny: envOf('dnsmasq', 'dnsmasq-nanny'), sidecar: envOf('sidecar', 'sidecar') },
  };
}

/**
 * kube-dns's event-loop figures in one scrape of its metrics (undefined where the build does not
 * export one): the largest delay since the last scrape (s; the scrape resets it), the delay
 * histogram's samples at most 5 ms and in all, the loop's thread's CPU wait (s), and the stalls
 * over 5 ms kube-dns told apart (runtime/stall-watch.ts).
 */
export function loopMetrics(text) {
  const num = (re) => {
    const m = re.exec(text);
    return m ? Number(m[1]) : undefined;
  };
  return {
    max: num(/^kubedns_event_loop_delay_max_seconds(?:\{[^}]*\})? (\S+)/m),
    le5: num(/^kubedns_event_loop_delay_seconds_bucket\{le="0\.005"\} (\S+)/m),
    count: num(/^kubedns_event_loop_delay_seconds_count(?:\{[^}]*\})? (\S+)/m),
    cpuWait: num(/^kubedns_event_loop_cpu_wait_seconds_total (\S+)/m),
    stallsCpuWait: num(/^kubedns_event_loop_stalls_total\{cause="cpu_wait"\} (\S+)/m),
    stallsProcess: num(/^kubedns_event_loop_stalls_total\{cause="process"\} (\S+)/m),
  };
}

export const KUBE_DNS_BIN = join(root, 'packages', 'kube-dns', 'bin', 'kube-dns.js');

/** How many kube-dns processes KUBEDNS_BENCH_TRACE_GC has traced so far (each gets its own file). */
let traced = 0;

/** kube-dns with the manifest's arguments and env, ports moved to free loopback ones; waits for readiness. */
export async function startKubeDns(m, api, configDir, extra = []) {
  const [port, healthz, metrics] = [await freePort(), await freePort(), await freePort()];
  const args = m.kubedns.map((a) => a.replace(/^--dns-port=.*/, `--dns-port=${port}`).replace(/^--config-dir=.*/, `--config-dir=${configDir}`));
  // KUBEDNS_BENCH_ARGS: extra kubedns flags, to compare options on and off (e.g. the zone options)
  const envArgs = (process.env.KUBEDNS_BENCH_ARGS ?? '').split(/\s+/).filter(Boolean);
  args.push('--dns-bind-address=127.0.0.1', '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthz}`, `--kubecfg-file=${api.kubeconfigPath}`, ...envArgs, ...extra);
  // the manifest's NODE_OPTIONS unless KUBEDNS_BENCH_NODE_OPTIONS says otherwise (to compare heap flags)
  const NODE_OPTIONS = process.env.KUBEDNS_BENCH_NODE_OPTIONS ?? m.env.kubedns.NODE_OPTIONS;
  // KUBEDNS_BENCH_TRACE_GC=<file>: V8's line per collection (--trace-gc, which node refuses in
  // NODE_OPTIONS) into that file, its times in ms since kube-dns started: bench.mjs then prints
  // when each of kube-dns's fixed-rate runs began and ended on that clock (give or take the tens of
  // ms node takes to start), so that a slow run can be matched with the collections in it
  const trace = process.env.KUBEDNS_BENCH_TRACE_GC;
  const traceFile = trace ? `${trace}.${++traced}` : undefined;
  const fd = traceFile ? openSync(traceFile, 'w') : undefined;
  const startedAt = performance.now();
  const p = start(process.execPath, [...(trace ? ['--trace-gc'] : []), KUBE_DNS_BIN, ...args], { env: { ...m.env.kubedns, PROMETHEUS_PORT: String(metrics), NODE_OPTIONS }, ...(fd !== undefined && { stdout: fd }) });
  if (fd !== undefined) closeSync(fd);
  const t0 = Date.now();
  for (;;) {
    if (await fetch(`http://127.0.0.1:${healthz}/readiness`).then((r) => r.status === 200, () => false)) break;
    if (p.exitCode !== null || Date.now() - t0 > 120_000) throw new Error(`kube-dns did not become ready: ${p.tail}`);
    await sleep(100);
  }
  return { p, port, healthz, metrics, syncMs: Date.now() - t0, startedAt, traceFile };
}

// ---------------------------------------------------------------------------------------------
// dnsperf. Throughput: 8 clients, 500 queries outstanding. Fixed rate (-Q): up to 5,000
// outstanding so a stall of the server does not hold back the sender (the queries a stall delays
// are measured, not skipped), and -v: one line per query with its latency, from which the
// percentiles are computed (dnsperf 2.10 has no latency histogram of its own); a query that timed
// out (the "T" lines) counts as the timeout. `rcodes`: dnsperf's count of each response code.
export const TIMEOUT_S = 5;
let outFiles = 0;

// opts.outstanding and opts.timeoutS (fixed rate only): a flood sender that must not slow down
// when queries go unanswered (a server that drops them) sets them high and short.
export async function dnsperf(port, file, opts = {}) {
  const timeoutS = opts.timeoutS ?? TIMEOUT_S;
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', file, '-l', String(opts.seconds), '-t', String(timeoutS)];
  if (opts.tcp) args.push('-m', 'tcp', '-c', '100', '-q', '1000');
  else if (opts.qps) args.push('-c', '8', '-q', String(opts.outstanding ?? 5000), '-Q', String(opts.qps), '-v');
  else args.push('-c', '8', '-q', '500');
  // With -v, dnsperf writes a line per reply from the thread that reads the replies. Into a pipe,
  // a moment in which this process is slow to read (its first JIT of the parsing below, a GC)
  // fills the pipe and blocks that thread, and every reply behind it is then measured late: the
  // tail would be the bench's own. So the lines go to a file, read once dnsperf has exited.
  const outFile = `${file}.dnsperf-${process.pid}-${++outFiles}.out`;
  const fd = opts.qps ? openSync(outFile, 'w') : undefined;
  if (opts.qps) collectOwnGarbage();
  const p = start('dnsperf', args, { stdout: fd ?? 'pipe' });
  if (fd !== undefined) {
    closeSync(fd);
    // 'exit' may not come when dnsperf could not start at all; 'error' does
    await new Promise((r) => (p.exitCode !== null ? r() : (p.once('exit', r), p.once('error', r))));
  }
  let lat = new Float64Array(opts.qps ? Math.ceil(opts.qps * opts.seconds * 1.1) + 1024 : 0);
  let n = 0;
  let timeouts = 0;
  let summary = '';
  try {
    for await (const line of createInterface({ input: fd !== undefined ? createReadStream(outFile) : p.stdout })) {
      if (line.startsWith('> ')) {
        const sp = line.lastIndexOf(' ');
        const v = line.startsWith('> T ') ? timeoutS : Number(line.slice(sp + 1));
        if (line.startsWith('> T ')) timeouts++;
        if (n === lat.length) { const b = new Float64Array(lat.length * 2); b.set(lat); lat = b; }
        lat[n++] = v * 1000;
      } else summary += `${line}\n`;
    }
  } finally {
    if (fd !== undefined) unlinkSync(outFile);
  }
  const code = await new Promise((r) => (p.exitCode !== null || p.failed ? r(p.exitCode) : p.once('exit', (c) => r(c))));
  const num = (re) => Number(re.exec(summary)?.[1]);
  const qps = num(/Queries per second:\s+([\d.]+)/);
  if (code !== 0 || !Number.isFinite(qps)) throw new Error(`dnsperf ${args.join(' ')} failed (${code}): ${p.tail || summary.slice(-500)}`);
  const rcodes = {};
  for (const m of (/Response codes:\s+(.*)/.exec(summary)?.[1] ?? '').matchAll(/([A-Z]+) (\d+)/g)) rcodes[m[1]] = Number(m[2]);
  const r = { qps: Math.round(qps), sent: num(/Queries sent:\s+(\d+)/), lost: num(/Queries lost:\s+(\d+)/), avgMs: +(num(/Average Latency \(s\):\s+([\d.]+)/) * 1000).toFixed(3), rcodes };
  if (opts.qps) {
    // opts.inOrder: the latencies also in the order the replies came (scripts/bench-tail.mjs --scavenges)
    const inOrder = opts.inOrder ? lat.slice(0, n) : undefined;
    const sorted = lat.subarray(0, n).sort();
    Object.assign(r, { offeredQps: opts.qps, seconds: opts.seconds, samples: n, timeouts, ...percentiles(sorted) });
    // the latencies themselves, for pooled(); not enumerable, so they stay out of the results file
    Object.defineProperty(r, 'latencies', { value: sorted });
    if (inOrder) Object.defineProperty(r, 'inOrder', { value: inOrder });
  }
  return r;
}

/** p50 / p99 / p99.9 / max of sorted latencies (ms). */
function percentiles(sorted) {
  const n = sorted.length;
  const pct = (q) => +sorted[Math.max(0, Math.ceil(q * n) - 1)].toFixed(3);
  return { p50Ms: pct(0.5), p99Ms: pct(0.99), p999Ms: pct(0.999), maxMs: pct(1) };
}

/**
 * Fixed-rate runs of one server taken as one: counts added up, qps averaged, percentiles of all
 * their latencies together (not an average of percentiles). In the result, `slices` is how many
 * runs were pooled and `sliceP99Ms` each run's own p99. Takes dnsperf() results of fixed-rate
 * runs only (they carry their latencies).
 */
export function pooled(runs) {
  const all = new Float64Array(runs.reduce((k, r) => k + r.latencies.length, 0));
  let at = 0;
  for (const r of runs) (all.set(r.latencies, at), (at += r.latencies.length));
  const sum = (k) => runs.reduce((a, r) => a + r[k], 0);
  const rcodes = {};
  for (const r of runs) for (const [k, v] of Object.entries(r.rcodes)) rcodes[k] = (rcodes[k] ?? 0) + v;
  return {
    qps: Math.round(sum('qps') / runs.length), sent: sum('sent'), lost: sum('lost'), avgMs: +(runs.reduce((a, r) => a + r.avgMs * r.sent, 0) / sum('sent')).toFixed(3), rcodes,
    offeredQps: runs[0].offeredQps, seconds: sum('seconds'), slices: runs.length, sliceP99Ms: runs.map((r) => r.p99Ms), samples: all.length, timeouts: sum('timeouts'), ...percentiles(all.sort()),
  };
}

