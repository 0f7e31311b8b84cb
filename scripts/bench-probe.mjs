// The well-behaved client of scripts/bench-reliability.mjs, on a thread of its own.
//
// It measures a reply's latency from the moment its query left to the moment its callback ran,
// so whatever holds up the loop it runs on is counted as kube-dns's. The bench's main thread
// builds flood files, forces a full collection of its own heap before each fixed-rate dnsperf
// (scripts/bench-procs.mjs), reads dnsperf's line per query and serves the API server kube-dns
// watches: on that loop the probe's slowest lookup during the water torture was the 171 ms the
// bench spent building its 400,000 names (2026-11-27). A worker thread has its own loop and heap.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { query } from '@kube-dns/dns-client';

/** Sends a query every `everyMs` for `seconds`; latency percentiles of the answered ones, and failures. */
async function run({ port, names, seconds, transport, everyMs }) {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const lat = [];
  let failed = 0;
  const pending = [];
  const end = Date.now() + seconds * 1000;
  for (let i = 0; Date.now() < end; i++) {
    const t0 = performance.now();
    pending.push(
      query({ host: '127.0.0.1', port }, { name: names[i % names.length], type: 'A', transport, timeoutMs: 2000 }).then(
        (r) => (r.packet.rcode === 'NOERROR' && (r.packet.answers ?? []).length > 0 ? lat.push(performance.now() - t0) : failed++),
        () => failed++,
      ),
    );
    await sleep(everyMs);
  }
  await Promise.all(pending);
  lat.sort((a, b) => a - b);
  const pct = (q) => (lat.length ? +lat[Math.min(lat.length - 1, Math.ceil(q * lat.length) - 1)].toFixed(2) : NaN);
  return { asked: lat.length + failed, failed, p50Ms: pct(0.5), p99Ms: pct(0.99), maxMs: lat.length ? +lat.at(-1).toFixed(1) : NaN };
}

/**
 * A well-behaved client asking `names` (A, over `transport`) of the DNS server on 127.0.0.1:`port`,
 * one every `everyMs` for `seconds`, from a worker thread: { asked, failed, p50Ms, p99Ms, maxMs }.
 */
export function probe(port, names, seconds, transport = 'udp', everyMs = 5) {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL(import.meta.url), { workerData: { port, names, seconds, transport, everyMs } });
    let result;
    w.once('message', (m) => (result = m));
    w.once('error', reject);
    w.once('exit', (code) => (result ? resolve(result) : reject(new Error(`the probe's thread exited (${code}) without a result`))));
  });
}

if (!isMainThread && workerData?.port) parentPort.postMessage(await run(workerData));
