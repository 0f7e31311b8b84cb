// The bench's ceiling: the least a Node UDP server can do per query, parse the question and answer
// it with one fixed A record (10.0.0.1, TTL 30). CommonJS so that each place that answers as the
// ceiling loads the same code: the ceiling's own process (bench.mjs), and the variants of
// scripts/bench-tail.mjs (the ceiling with a busy-wait per query, and kube-dns's process with its
// DNS listener answering as the ceiling does, through scripts/bench-tail-preload.cjs).
'use strict';

/** The reply to query bytes `m`, or undefined for a packet too short to hold a question. */
function ceilingAnswer(m) {
  if (m.length < 12) return undefined;
  let o = 12;
  while (o < m.length && m[o] !== 0) o += m[o] + 1;
  o += 5; // root label, type, class
  if (o > m.length) return undefined;
  const b = Buffer.allocUnsafe(o + 16);
  m.copy(b, 0, 0, o);
  b[2] = 0x84 | (m[2] & 1); b[3] = 0x80; // QR AA RD, RA
  b.writeUInt16BE(1, 4); b.writeUInt32BE(0x00010000, 6); b.writeUInt16BE(0, 10);
  b.writeUInt32BE(0xc00c0001, o); b.writeUInt32BE(0x00010000, o + 4); // name ptr, A, IN, TTL
  b.writeUInt32BE(0x001e0004, o + 8); b.writeUInt32BE(0x0a000001, o + 12); // TTL 30, 10.0.0.1
  return b;
}

/**
 * A handler that spends `us` microseconds of CPU (a busy-wait) and then answers as the ceiling:
 * a server that costs what kube-dns costs per query but does none of its work (0: the ceiling).
 */
function ceilingHandler(us = 0) {
  if (!(us > 0)) return ceilingAnswer;
  const { performance } = require('node:perf_hooks');
  const ms = us / 1000;
  return (m) => {
    const t0 = performance.now();
    while (performance.now() - t0 < ms);
    return ceilingAnswer(m);
  };
}

/**
 * The ceiling as a program for `node -e` (argv[1]: the port; "ready" on stderr once bound). It sends
 * as kube-dns's listener does (packages/kube-dns/src/server/udp.ts): the reply address is handed
 * back by a synchronous lookup instead of dns.lookup's regular expression and next tick, about 13%
 * of its qps. A ceiling without that would be one kube-dns could beat by the trick alone.
 */
function ceilingProgram(busyUs = 0, prelude = '') {
  return `${prelude}
const answer = require(${JSON.stringify(__filename)}).ceilingHandler(${Number(busyUs) || 0});
const s = require('node:dgram').createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024, // as kube-dns's
  lookup: (address, family, callback) => callback(null, address, family) });
s.on('message', (m, r) => {
  const b = answer(m);
  if (b) s.send(b, r.port, r.address);
});
s.bind(Number(process.argv[1]), '127.0.0.1', () => process.stderr.write('ready'));`;
}

/**
 * Code run before the ceiling starts, for scripts/bench-tail.mjs's variants: each gives the
 * ceiling one thing kube-dns's process has and the ceiling has not, to see which of them carries
 * the process's share of the tail. Started with kube-dns's env from the manifest (NODE_OPTIONS,
 * MALLOC_TRIM_THRESHOLD_) over the images' (LD_PRELOAD, NODE_ENV) in every variant.
 *   env     the V8 flag kube-dns sets at start (runtime/scavenge.ts), which NODE_OPTIONS cannot
 *   heap    env, and a heap about kube-dns's with 2,000 Services held for the process's life
 *           (60,000 small records in a Map: an old space of about 14 MB, against the 11-13 MB
 *           --trace-gc shows for kube-dns under the mix)
 *   malloc  env, and a malloc heap with holes: 40,000 blocks of 64 B to 16 KB, about half of
 *           them kept (kube-dns's [heap] is 4-5 MB after its sync, the ceiling's under 1)
 *   gcobs   env, and a PerformanceObserver of 'gc' entries with an empty callback: what prom-client's
 *           nodejs_gc_duration_seconds installs (kube-dns leaves it out since 2026-11-26)
 *   timers  env, and kube-dns's periodic work: an event-loop delay monitor at 10 ms
 *           (http/metrics.ts), a 20 ms timer reading the thread's schedstat (runtime/stall-watch.ts),
 *           a 2 s timer reading the heap's spaces (runtime/heap-settler.ts)
 */
const NO_PARALLEL_SCAVENGE = "require('node:v8').setFlagsFromString('--no-parallel-scavenge');";
const CEILING_PRELUDES = {
  env: NO_PARALLEL_SCAVENGE,
  heap: `${NO_PARALLEL_SCAVENGE}
globalThis.heldLikeAZone = new Map();
for (let i = 0; i < 60000; i++) globalThis.heldLikeAZone.set('svc' + i + '.ns' + (i % 20), { name: 'svc' + i, ns: 'ns' + (i % 20), ips: ['10.0.' + (i >> 8) + '.' + (i & 255)], ports: [{ name: 'http', port: 80 }] });`,
  malloc: `${NO_PARALLEL_SCAVENGE}
{
  let x = 1;
  const held = (globalThis.heldMallocChunks = []);
  for (let i = 0; i < 40000; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const b = Buffer.allocUnsafeSlow(64 + (x % 16384));
    if (x & 1) held.push(b);
  }
}`,
  gcobs: `${NO_PARALLEL_SCAVENGE}
new (require('node:perf_hooks').PerformanceObserver)(() => {}).observe({ entryTypes: ['gc'] });`,
  timers: `${NO_PARALLEL_SCAVENGE}
{
  require('node:perf_hooks').monitorEventLoopDelay({ resolution: 10 }).enable();
  const fs = require('node:fs'), fd = fs.openSync('/proc/thread-self/schedstat', 'r'), b = Buffer.alloc(128);
  setInterval(() => fs.readSync(fd, b, 0, 128, 0), 20);
  setInterval(() => require('node:v8').getHeapSpaceStatistics(), 2000);
}`,
};

module.exports = { ceilingAnswer, ceilingHandler, ceilingProgram, CEILING_PRELUDES };
