// kube-dns's /metrics as Prometheus reads it: the original's skydns_* series and ours, parsed
// by a Prometheus text-format parser, histograms cumulative and consistent.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { KubeDnsMetrics } from '../src/http/metrics.js';

test('per-query metrics: exact names and types, labels, cumulative buckets, +Inf = count', async () => {
  const m = new KubeDnsMetrics({}, { synced: () => true, records: () => ({ services: 3 }) });
  for (let i = 0; i < 10; i++) m.observe(1, 0, 'udp', 'auth', 0.0002, 60, i > 0); // A NOERROR, 9 cache hits
  m.observe(28, 3, 'tcp', 'auth', 0.003, 100, false); // AAAA NXDOMAIN
  m.observe(12, 2, 'udp', 'reverse', 2, 40, false); // PTR SERVFAIL, slow
  m.observe(1, 5, 'udp', 'recursive', 0.02, 30, false); // REFUSED
  const text = await m.registry.metrics();
  const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
  const sample = (name: string, labels: Record<string, string>) =>
    families.get(name)?.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
  // the parser folds labelled histograms into one bucket map, so their series are read as exposed
  const line = (series: string) => {
    const found = text.split('\n').find((l) => l.startsWith(`${series} `));
    assert.ok(found, `${series} is exposed`);
    return found.slice(series.length + 1);
  };

  assert.equal(families.get('kubedns_dns_requests_total')?.type, 'COUNTER');
  assert.equal(sample('kubedns_dns_requests_total', { qtype: 'A', rcode: 'NOERROR', transport: 'udp' })?.value, '10');
  assert.equal(sample('kubedns_dns_requests_total', { qtype: 'AAAA', rcode: 'NXDOMAIN', transport: 'tcp' })?.value, '1');
  assert.equal(sample('kubedns_dns_requests_total', { qtype: 'PTR', rcode: 'SERVFAIL', transport: 'udp' })?.value, '1');
  assert.equal(families.get('kubedns_dns_response_cache_hits_total')?.metrics[0]?.value, '9');
  assert.equal(families.get('kubedns_dns_response_cache_misses_total')?.metrics[0]?.value, '4');

  assert.equal(families.get('kubedns_dns_request_duration_seconds')?.type, 'HISTOGRAM');
  const d = 'kubedns_dns_request_duration_seconds';
  assert.equal(line(`${d}_count{transport="udp",system="auth"}`), '10');
  assert.equal(line(`${d}_bucket{transport="udp",system="auth",le="0.0001"}`), '0');
  assert.equal(line(`${d}_bucket{transport="udp",system="auth",le="0.00025"}`), '10', 'cumulative: 0.0002 falls in le=0.00025 and every bucket above');
  assert.equal(line(`${d}_bucket{transport="udp",system="auth",le="5"}`), '10');
  assert.equal(line(`${d}_bucket{transport="udp",system="auth",le="+Inf"}`), '10');
  assert.equal(line(`${d}_count{transport="tcp",system="auth"}`), '1');

  // the original's names, kept for existing dashboards
  assert.equal(sample('skydns_skydns_dns_request_count_total', { system: 'auth' })?.value, '11');
  assert.equal(sample('skydns_skydns_dns_request_count_total', { system: 'reverse' })?.value, '1');
  assert.equal(sample('skydns_skydns_dns_error_count_total', { system: 'auth', cause: 'nxdomain' })?.value, '1');
  assert.equal(sample('skydns_skydns_dns_error_count_total', { system: 'reverse', cause: 'servfail' })?.value, '1');
  assert.equal(sample('skydns_skydns_dns_error_count_total', { system: 'recursive', cause: 'refused' })?.value, '1');
  assert.equal(families.get('skydns_skydns_dns_request_duration_seconds')?.type, 'HISTOGRAM');
  assert.equal(line('skydns_skydns_dns_request_duration_seconds_bucket{system="reverse",le="1"}'), '0');
  assert.equal(line('skydns_skydns_dns_request_duration_seconds_bucket{system="reverse",le="2.5"}'), '1');
  assert.equal(line('skydns_skydns_dns_request_duration_seconds_sum{system="reverse"}'), '2');
  assert.equal(line('skydns_skydns_dns_response_size_bytes_bucket{system="auth",le="512"}'), '11');
  assert.equal(sample('skydns_skydns_dns_cachemiss_count_total', { cache: 'response' })?.value, '4');
  assert.equal(families.get('kubedns_synced')?.metrics[0]?.value, '1');
  assert.equal(sample('kubedns_records', { kind: 'services' })?.value, '3');
  assert.ok(families.has('process_resident_memory_bytes'), 'process metrics');
  // prom-client's own event-loop gauges are dropped: kubedns_event_loop_delay_* measure the same, for less per scrape
  assert.ok(!families.has('nodejs_eventloop_lag_seconds') && !families.has('nodejs_eventloop_lag_stddev_seconds'), 'no nodejs_eventloop_lag_*');
  // nor the GC duration histogram: its observer of every collection costs the query loop a detour
  // after each scavenge (docs/hot-path.md); the heap's own figures stay
  assert.ok(!families.has('nodejs_gc_duration_seconds'), 'no nodejs_gc_duration_seconds');
  assert.ok(families.has('nodejs_heap_space_size_used_bytes') && families.has('nodejs_heap_size_used_bytes'), 'heap metrics');
});

test("the original's duration histogram and request count agree with every query observed", async () => {
  // kube-dns records a query's duration once, in its own histogram; the original's skydns_* series
  // are summed from it over both transports when scraped. Checked against the same observations
  // counted directly, on the original's bucket bounds, with values on and around every bound.
  const m = new KubeDnsMetrics();
  const bounds = [0.001, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
  const values = [0.00003, 0.0007, 20, ...bounds.flatMap((b) => [b * 0.999, b, b * 1.001])];
  const systems = ['auth', 'recursive', 'reverse'] as const;
  const seen = new Map(systems.map((s) => [s, [] as number[]]));
  let k = 0;
  for (const v of values) {
    for (const system of systems) {
      if (++k % 4 === 0) continue; // not every system gets every value
      const transport = k % 3 === 0 ? 'tcp' : 'udp';
      m.observe(1, 0, transport, system, v, 50, false);
      seen.get(system)!.push(v);
    }
  }
  const text = await m.registry.metrics();
  const line = (series: string) => text.split('\n').find((l) => l.startsWith(`${series} `))?.slice(series.length + 1);
  const name = 'skydns_skydns_dns_request_duration_seconds';
  for (const system of systems) {
    const vs = seen.get(system)!;
    for (const le of bounds) assert.equal(line(`${name}_bucket{system="${system}",le="${le}"}`), String(vs.filter((v) => v <= le).length), `${system} le=${le}`);
    assert.equal(line(`${name}_bucket{system="${system}",le="+Inf"}`), String(vs.length));
    assert.equal(line(`${name}_count{system="${system}"}`), String(vs.length));
    assert.ok(Math.abs(Number(line(`${name}_sum{system="${system}"}`)) - vs.reduce((a, b) => a + b, 0)) < 1e-9, `${system} sum`);
    assert.equal(line(`skydns_skydns_dns_request_count_total{system="${system}"}`), String(vs.length));
  }
});

test('event-loop delay: a stall shows in kubedns_event_loop_delay_seconds and in the max since the last scrape', async (t) => {
  const m = new KubeDnsMetrics();
  t.after(() => m.close());
  await m.registry.metrics(); // start a fresh interval
  await new Promise((r) => setTimeout(r, 100));
  const until = performance.now() + 120;
  while (performance.now() < until) {
    /* a 120 ms stall of the event loop */
  }
  await new Promise((r) => setTimeout(r, 50));
  const text = await m.registry.metrics();
  const value = (series: string) => Number(text.split('\n').find((l) => l.startsWith(`${series} `))?.split(' ')[1]);
  assert.match(text, /# TYPE kubedns_event_loop_delay_seconds histogram/);
  assert.match(text, /# TYPE kubedns_event_loop_delay_max_seconds gauge/);
  const count = value('kubedns_event_loop_delay_seconds_count');
  assert.ok(count > 0, `${count} samples`);
  assert.ok(value('kubedns_event_loop_delay_seconds_bucket{le="0.05"}') < count, 'the stall is counted above 50 ms');
  assert.equal(value('kubedns_event_loop_delay_seconds_bucket{le="+Inf"}'), count);
  assert.ok(value('kubedns_event_loop_delay_max_seconds') >= 0.1, `max ${value('kubedns_event_loop_delay_max_seconds')}`);
  // the max covers one scrape interval: a calm interval after it shows a small max
  await new Promise((r) => setTimeout(r, 100));
  const calm = await m.registry.metrics();
  const max2 = Number(calm.split('\n').find((l) => l.startsWith('kubedns_event_loop_delay_max_seconds '))?.split(' ')[1]);
  assert.ok(max2 < 0.1, `max after a calm interval: ${max2}`);
  // buckets are cumulative and never shrink
  const count2 = Number(calm.split('\n').find((l) => l.startsWith('kubedns_event_loop_delay_seconds_count '))?.split(' ')[1]);
  assert.ok(count2 >= count);
});

test('event-loop delay: each stall is counted once over the bucket it passes, not as a share of coarse percentiles', async (t) => {
  const m = new KubeDnsMetrics();
  t.after(() => m.close());
  const read = async () => {
    const text = await m.registry.metrics();
    const value = (series: string) => Number(text.split('\n').find((l) => l.startsWith(`${series} `))?.split(' ')[1]);
    return { count: value('kubedns_event_loop_delay_seconds_count'), under: value('kubedns_event_loop_delay_seconds_bucket{le="0.1"}') };
  };
  let before = await read();
  // among a few hundred quiet samples (10 ms apart), as between two scrapes: the coarse steps
  // of the percentile map are widest there
  for (const [stalls, quietMs] of [[1, 2000], [3, 3000]] as const) {
    for (let i = 0; i < stalls; i++) {
      await new Promise((r) => setTimeout(r, quietMs / stalls));
      const until = performance.now() + 150;
      while (performance.now() < until) {
        /* a 150 ms stall */
      }
    }
    await new Promise((r) => setTimeout(r, 100));
    const after = await read();
    const over = after.count - before.count - (after.under - before.under);
    assert.equal(over, stalls, `${stalls} stall(s) of 150 ms: samples over 0.1 s`);
    before = after;
  }
});

test('CPU contention: the time the event loop waited for a CPU shows in kubedns_event_loop_cpu_wait_seconds_total', async (t) => {
  const m = new KubeDnsMetrics();
  t.after(() => m.close());
  const wait = async () => Number((await m.registry.metrics()).split('\n').find((l) => l.startsWith('kubedns_event_loop_cpu_wait_seconds_total '))?.split(' ')[1]);
  const before = await wait();
  assert.ok(before >= 0, `kubedns_event_loop_cpu_wait_seconds_total is exported (${before})`);
  // this thread and a busy process share CPU 0 for a second: each gets half, and waits the rest
  execFileSync('taskset', ['-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  t.after(() => execFileSync('taskset', ['-p', '-c', `0-${availableParallelism() - 1}`, String(process.pid)], { stdio: 'ignore' }));
  const hog = spawn('taskset', ['-c', '0', process.execPath, '-e', 'const end = Date.now() + 3000; while (Date.now() < end);'], { stdio: 'ignore' });
  t.after(() => hog.kill('SIGKILL'));
  await new Promise((r) => setTimeout(r, 300)); // the hog is running
  const from = await wait();
  const until = performance.now() + 1000;
  while (performance.now() < until) {
    /* wants the CPU all the time */
  }
  const waited = (await wait()) - from;
  t.diagnostic(`waited ${waited.toFixed(2)} s for a CPU in 1 s of work beside a busy process`);
  assert.ok(waited >= 0.25, `${waited.toFixed(2)} s of CPU wait counted in 1 s shared with a busy process`);
});

/** kubedns_event_loop_stalls_total by cause, from a scrape. */
async function stalls(m: KubeDnsMetrics): Promise<{ cpuWait: number; process: number }> {
  const text = await m.registry.metrics();
  const v = (cause: string) => Number(new RegExp(`^kubedns_event_loop_stalls_total\\{cause="${cause}"\\} (\\S+)`, 'm').exec(text)?.[1]);
  return { cpuWait: v('cpu_wait'), process: v('process') };
}

/** This thread's run-queue wait so far, ms (as the watcher reads it). */
function waitedMs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'latin1').split(' ')[1]) / 1e6;
}

test("a stall of kube-dns's own work counts under cause=process, one per stall", async (t) => {
  const m = new KubeDnsMetrics();
  t.after(() => m.close());
  const before = await stalls(m);
  assert.ok(before.cpuWait >= 0 && before.process >= 0, 'kubedns_event_loop_stalls_total is exported for both causes');
  await new Promise((r) => setTimeout(r, 60)); // the watcher has ticked
  const w0 = waitedMs();
  const until = performance.now() + 60;
  while (performance.now() < until) {
    /* a 60 ms stall of the event loop */
  }
  const waited = waitedMs() - w0;
  await new Promise((r) => setTimeout(r, 60));
  const after = await stalls(m);
  const total = after.cpuWait + after.process - (before.cpuWait + before.process);
  assert.ok(total >= 1, `the stall is counted (${total})`);
  // the test shares the machine with others: a stall that barely waited for a CPU must be the
  // process's own, and counted once
  if (waited < 15) assert.equal(after.process - before.process, 1, `counted once as the process's own (waited ${waited.toFixed(1)} ms for a CPU)`);
});

test('a stall spent mostly waiting for a CPU counts under cause=cpu_wait', async (t) => {
  const m = new KubeDnsMetrics();
  t.after(() => m.close());
  // this thread and three busy processes share CPU 0: it gets a quarter of it and waits the rest
  execFileSync('taskset', ['-p', '-c', '0', String(process.pid)], { stdio: 'ignore' });
  t.after(() => execFileSync('taskset', ['-p', '-c', `0-${availableParallelism() - 1}`, String(process.pid)], { stdio: 'ignore' }));
  const hogs = [0, 1, 2].map(() => spawn('taskset', ['-c', '0', process.execPath, '-e', 'const end = Date.now() + 4000; while (Date.now() < end);'], { stdio: 'ignore' }));
  t.after(() => hogs.forEach((h) => h.kill('SIGKILL')));
  await new Promise((r) => setTimeout(r, 300)); // the hogs are running
  const before = await stalls(m);
  await new Promise((r) => setTimeout(r, 60));
  // 30 ms of CPU time on the loop, which takes about four times as long beside the hogs
  const cpu0 = process.cpuUsage();
  const w0 = waitedMs();
  const t0 = performance.now();
  for (;;) {
    const used = process.cpuUsage(cpu0);
    if (used.user + used.system >= 30_000) break;
  }
  const wall = performance.now() - t0;
  const waited = waitedMs() - w0;
  await new Promise((r) => setTimeout(r, 60));
  const after = await stalls(m);
  t.diagnostic(`30 ms of work took ${wall.toFixed(0)} ms, ${waited.toFixed(0)} ms of it waiting for a CPU`);
  assert.ok(waited >= wall / 2, `the setup made the thread wait (${waited.toFixed(0)} of ${wall.toFixed(0)} ms)`);
  assert.ok(after.cpuWait - before.cpuWait >= 1, `counted as CPU wait: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
  assert.equal(after.process, before.process, "and not as the process's own");
});
