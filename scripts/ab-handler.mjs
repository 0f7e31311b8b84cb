#!/usr/bin/env node
// The handler's cost per query, two builds side by side in one process: DnsHandler.handle() of
// compiled tree A and of tree B (default: packages/kube-dns/dist) over the same prebuilt queries,
// in alternating batches, so both see the same moment of a machine whose speed drifts by 10-20%
// from one run to the next (a VM shared with others). Prints each build's median time per query
// and the median of the per-round ratios B/A.
//   cp -r packages/kube-dns/dist packages/kube-dns/dist-before   # before the change
//   ... change, npx tsc -b ...
//   node scripts/ab-handler.mjs packages/kube-dns/dist-before [packages/kube-dns/dist]
// Env: WORKLOADS=repeated,nxdomain,mix (default those three; abuse: the bench's abuse client's
// questions, wildcards and the 1,000 named endpoints of a headless service with a 4096-byte EDNS
// buffer, answered with --wildcards; naming it adds that service and the option); NOCACHE=1: no
// response cache (every answer built); N: queries per workload (default 100,000; each round takes
// up to 20,000 of them, so fewer makes a run shorter, for costly answers); COLD=0 for warm only, COLD=1 for cold only
// (cold: 4 MiB of other memory written between two queries, as dnsperf and the kernel do between
// two queries at a moderate rate: docs/hot-path.md, "cold caches"). A tree must sit inside this
// repository (its imports resolve through node_modules). The zone: the bench's 2,000 Services.
// The two trees share node's builtins and node_modules, whose compiled code sees both: which one
// runs first can move a figure by 20-50% (docs/hot-path.md, "Measuring"). Run both orders, or
// each tree alone as A and B, one process per build.
import { resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { performance } from 'node:perf_hooks';
import * as dnsPacket from 'dns-packet';
import { silentLogger } from '@kube-dns/config';

const root = new URL('..', import.meta.url).pathname;
const [aDir, bDir = `${root}packages/kube-dns/dist`] = process.argv.slice(2);
if (!aDir) {
  process.stderr.write('usage: node scripts/ab-handler.mjs <compiled tree A> [<compiled tree B>]\n');
  process.exit(2);
}

const NAMES = (process.env.WORKLOADS ?? 'repeated,nxdomain,mix').split(',');
const ABUSE = NAMES.includes('abuse');

async function build(dir) {
  const url = (p) => pathToFileURL(resolvePath(dir, p)).href;
  const { Zone } = await import(url('src/records/zone.js'));
  const { resolve } = await import(url('src/resolve/resolve.js'));
  const { DnsHandler } = await import(url('src/server/handler.js'));
  const { KubeDnsMetrics } = await import(url('src/http/metrics.js'));
  const F = await import(url('test/resolve-fixtures.js'));
  // the byte-level negative answers, wired as app.ts does, in trees that have them
  const { AbsentNames } = await import(url('src/resolve/absent.js')).catch(() => ({}));
  const zone = new Zone();
  const services = [];
  const ptr = [];
  for (let i = 1; i <= 2000; i++) {
    const ns = `ns${i % 20}`;
    const name = `svc${i}`;
    if (i % 10 === 0) {
      const ips = [0, 1, 2].map((k) => `10.${128 + k}.${i >> 8}.${i & 255}`);
      zone.setService(F.headless(ns, name));
      zone.setSlice(F.slice(ns, `${name}-x`, name, ips.map((ip) => F.ep(ip)), [F.port('http', 8080)]));
      ptr.push(...ips);
    } else {
      const ip = `10.96.${i >> 8}.${i & 255}`;
      zone.setService(F.clusterIP(ns, name, [ip], [F.port('http', 80)]));
      ptr.push(ip);
    }
    services.push(`${name}.${ns}.svc.cluster.local`);
  }
  if (ABUSE) {
    // the bench's big.ns0 (scripts/bench-workloads.mjs): 1,000 endpoints, each with a hostname
    const eps = Array.from({ length: 1000 }, (_, j) => F.ep(`10.200.${j >> 8}.${j & 255}`, `pod-${j}`));
    zone.setService(F.headless('ns0', 'big'));
    zone.setSlice(F.slice('ns0', 'big-x', 'big', eps, [F.port('http', 8080)]));
  }
  const opts = { ...F.OPTS, wildcards: ABUSE };
  const handler = new DnsHandler({
    zone,
    resolve: (n, t, l) => resolve(zone, n, t, opts, l),
    ...(AbsentNames && { absent: new AbsentNames(opts, zone.presence) }),
    forwarder: { forward: async () => undefined },
    isSynced: () => true,
    log: silentLogger(),
    observer: new KubeDnsMetrics(),
    // NOCACHE=1: no response cache, every answer built (the abuse line's wildcards after each churn)
    ...(process.env.NOCACHE === '1' && { cacheEntries: 0 }),
  });
  return { handler, services, ptr };
}

const A = await build(aDir);
const B = await build(bDir);

let id = 0;
const query = (name, type, udpPayloadSize) =>
  dnsPacket.encode({ type: 'query', id: id++ & 0xffff, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type }], ...(udpPayloadSize && { additionals: [{ type: 'OPT', name: '.', udpPayloadSize }] }) });
let seed = 7;
const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
const pick = (a) => a[Math.floor(rand() * a.length)];
const N = Number(process.env.N ?? 100_000);
const expansion = (x, i) => `${x}.${['ns3.svc.cluster.local', 'svc.cluster.local', 'cluster.local'][i % 3]}`;
// the shapes of the bench's files (scripts/bench-workloads.mjs), as prebuilt query buffers
const workloads = {
  repeated: () => {
    const a = A.services.slice(0, 100).map((n) => query(n, 'A'));
    return Array.from({ length: N }, (_, i) => a[i % 100]);
  },
  nxdomain: () => Array.from({ length: N }, (_, i) => query(expansion(`u${i}.example.com`, i), i & 1 ? 'AAAA' : 'A')),
  mix: () =>
    Array.from({ length: N }, (_, i) => {
      const r = i % 20;
      if (r < 12) return query(expansion(`api${i}.vendor.com`, r), r & 1 ? 'AAAA' : 'A');
      if (r < 18) return query(pick(A.services), r & 1 ? 'AAAA' : 'A');
      if (r === 18) return query(`_http._tcp.${pick(A.services)}`, 'SRV');
      return query(`${pick(A.ptr).split('.').reverse().join('.')}.in-addr.arpa`, 'PTR');
    }),
  // what scripts/bench-abuse.mjs sends over UDP, in its order
  abuse: () => {
    const qs = [];
    const sizes = [4096, 4000, 2048, 1400];
    let k = 0;
    for (const type of ['A', 'AAAA', 'SRV']) {
      for (let n = 0; n < 20; n++) {
        const size = sizes[k++ % sizes.length];
        qs.push(query('*.*.svc.cluster.local', type, size), query(`*.ns${n}.svc.cluster.local`, type, size));
        qs.push(query('big.ns0.svc.cluster.local', type === 'SRV' ? 'A' : type, size), query('_http._tcp.big.ns0.svc.cluster.local', 'SRV', size));
      }
    }
    return Array.from({ length: N }, (_, i) => qs[i % qs.length]);
  },
};

const junk = new Uint8Array(4 << 20);
/** µs per query over n queries from `from`, timing only the calls. */
function run(handler, qs, from, n, cold) {
  let total = 0;
  for (let i = 0; i < n; i++) {
    if (cold) for (let k = i & 63; k < junk.length; k += 64) junk[k] = i;
    const q = qs[(from + i) % qs.length];
    const t0 = performance.now();
    handler.handle(q, 'udp', '127.0.0.1', 5353);
    total += performance.now() - t0;
  }
  return (total / n) * 1000;
}
const median = (x) => [...x].sort((p, q) => p - q)[x.length >> 1];

const modes = process.env.COLD === '0' ? [false] : process.env.COLD === '1' ? [true] : [false, true];
for (const name of NAMES) {
  const qs = workloads[name]();
  for (const cold of modes) {
    // V8 optimizes in several steps, some only after hundreds of thousands of calls: timed
    // before the last of them, one build would be measured half in another tier
    for (let k = 0; k < 5; k++) {
      run(A.handler, qs, 0, N, false);
      run(B.handler, qs, 0, N, false);
    }
    const n = Math.min(N, cold ? 4000 : 20_000);
    const a = [];
    const b = [];
    const ratio = [];
    for (let r = 0; r < 20; r++) {
      const from = 20_000 + r * n;
      // which build goes first alternates: the second of a pair runs on caches the first warmed
      const [x, y] = r & 1 ? [run(B.handler, qs, from, n, cold), run(A.handler, qs, from, n, cold)].reverse() : [run(A.handler, qs, from, n, cold), run(B.handler, qs, from, n, cold)];
      a.push(x);
      b.push(y);
      ratio.push(y / x);
    }
    const faster = ratio.filter((v) => v < 1).length;
    if (process.env.VERBOSE) process.stdout.write(`  A ${a.map((v) => v.toFixed(2)).join(" ")}\n  B ${b.map((v) => v.toFixed(2)).join(" ")}\n`);
    process.stdout.write(`${name} ${cold ? 'cold' : 'warm'}: A ${median(a).toFixed(2)} µs, B ${median(b).toFixed(2)} µs, B/A ${median(ratio).toFixed(3)} (B faster in ${faster}/20 rounds)\n`);
  }
}
