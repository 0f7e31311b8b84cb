// The bench's cluster and query files (docs/benchmarks.md describes their shape).
// Everything is generated from a seeded PRNG so two runs send the same traffic.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { clusterIPService, endpointSlice, headlessService, APISERVER_BOOKMARK_INTERVAL_MS, startFakeApiServer, startTestDnsServer } from '@kube-dns/testkit';

export const NAMESPACES = 20;
export const SERVICES = 2000;
export const EXTERNAL_NAMES = 3000;
/** Endpoints of the one large headless service the abuse client asks for (oversize answers). */
export const BIG_ENDPOINTS = 1000;
export const BIG = { ns: 'ns0', name: 'big' };

/** mulberry32: small, fast, good enough to shuffle query files reproducibly. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rev = (ip) => `${ip.split('.').reverse().join('.')}.in-addr.arpa`;

/**
 * 2,000 services over 20 namespaces, one in ten headless with three ready endpoints, every one
 * with a named port `http`; plus `big.ns0`, headless with 1,000 named endpoints.
 * Returns what the query files need: FQDNs and the IPs that have PTR records.
 */
export function seedCluster(api) {
  const services = [];
  const ptrIps = [];
  for (let i = 1; i <= SERVICES; i++) {
    const ns = `ns${i % NAMESPACES}`;
    const name = `svc${i}`;
    const hi = i >> 8;
    const lo = i & 255;
    if (i % 10 === 0) {
      const ips = [0, 1, 2].map((k) => `10.${128 + k}.${hi}.${lo}`);
      api.upsert('services', headlessService(ns, name, [{ name: 'http', port: 80 }]));
      api.upsert('endpointslices', endpointSlice(ns, name, `${name}-x`, 'IPv4', ips.map((ip) => ({ ip })), [{ name: 'http', port: 8080 }]));
      ptrIps.push(...ips);
    } else {
      const ip = `10.96.${hi}.${lo}`;
      api.upsert('services', clusterIPService(ns, name, [ip], [{ name: 'http', port: 80 }]));
      ptrIps.push(ip);
    }
    services.push(`${name}.${ns}.svc.cluster.local`);
  }
  api.upsert('services', headlessService(BIG.ns, BIG.name, [{ name: 'http', port: 80 }]));
  const big = [];
  for (let j = 0; j < BIG_ENDPOINTS; j++) big.push({ ip: `10.200.${j >> 8}.${j & 255}`, hostname: `pod-${j}` });
  api.upsert('endpointslices', endpointSlice(BIG.ns, BIG.name, `${BIG.name}-x`, 'IPv4', big, [{ name: 'http', port: 8080 }]));
  return { services, ptrIps };
}

/**
 * The cluster kube-dns runs against in the DNS benches: the test kit's API server seeded with
 * seedCluster, a test upstream that answers 192.0.2.1 to anything, and a config directory
 * (`<work>/config`) naming that upstream as upstreamNameservers. What stops the two servers is
 * pushed on `cleanup`.
 */
export async function startBenchCluster(work, cleanup) {
  const api = await startFakeApiServer({ historySize: 20_000, bookmarkIntervalMs: APISERVER_BOOKMARK_INTERVAL_MS });
  cleanup.push(() => api.close());
  const cluster = seedCluster(api);
  const upstream = await startTestDnsServer({ answerIp: '192.0.2.1' });
  cleanup.push(() => upstream.close());
  const configDir = join(work, 'config');
  await rm(configDir, { recursive: true, force: true });
  await mkdir(configDir);
  await writeFile(join(configDir, 'upstreamNameservers'), JSON.stringify([`127.0.0.1:${upstream.port}`]));
  return { api, cluster, upstream, configDir };
}

/** Changes one ClusterIP service's address: the churn a live cluster has (abuse line). */
export function churnOne(api, k) {
  const i = 1 + ((k * 7) % SERVICES);
  if (i % 10 === 0) return;
  const ip = `10.${97 + (k & 1)}.${i >> 8}.${i & 255}`;
  api.upsert('services', clusterIPService(`ns${i % NAMESPACES}`, `svc${i}`, [ip], [{ name: 'http', port: 80 }]));
}

async function writeLines(file, lines) {
  await writeFile(file, lines.join('\n') + '\n');
  return file;
}

/** Repeated names: A of 100 services, asked over and over (the response cache's best case). */
export function repeatedFile(cluster, file) {
  return writeLines(file, cluster.services.slice(0, 100).map((n) => `${n} A`));
}

/**
 * The realistic mix, in blocks of 20 questions shuffled as units:
 *  - 12 (60%): two ndots:5 search-path expansions, each the A and AAAA of X.N.svc.cluster.local,
 *    X.svc.cluster.local and X.cluster.local for an external name X asked from namespace N
 *    (all NXDOMAIN); every (X, N) pair of 3,000 names × 20 namespaces once per file;
 *  - 6 (30%): A and AAAA of three random services;
 *  - 1 (5%): SRV _http._tcp of a random service;
 *  - 1 (5%): PTR of a random service IP or headless endpoint.
 * `salt` renames the external names, so each run sees names no earlier run asked.
 */
export function mixFile(cluster, file, salt = 0) {
  const rand = prng(1000 + salt);
  const pick = (a) => a[Math.floor(rand() * a.length)];
  const pairs = [];
  for (let x = 0; x < EXTERNAL_NAMES; x++) for (let n = 0; n < NAMESPACES; n++) pairs.push([x, n]);
  shuffle(pairs, rand);
  const expansion = ([x, n]) => {
    const name = `api${x}.vendor${x % 211}-r${salt}.com`;
    return [`${name}.ns${n}.svc.cluster.local`, `${name}.svc.cluster.local`, `${name}.cluster.local`].flatMap((q) => [`${q} A`, `${q} AAAA`]);
  };
  const lines = [];
  for (let b = 0; b + 1 < pairs.length; b += 2) {
    const units = [expansion(pairs[b]), expansion(pairs[b + 1])];
    for (let k = 0; k < 3; k++) {
      const s = pick(cluster.services);
      units.push([`${s} A`, `${s} AAAA`]);
    }
    units.push([`_http._tcp.${pick(cluster.services)} SRV`], [`${rev(pick(cluster.ptrIps))} PTR`]);
    shuffle(units, rand);
    for (const u of units) lines.push(...u);
  }
  return writeLines(file, lines);
}

/** Unique NXDOMAIN names alone: the three expansion shapes, a new X on every line. */
export function nxdomainFile(file, salt = 0, count = 600_000) {
  const lines = [];
  for (let i = 0; i < count; i++) {
    const x = `u${i}-r${salt}.example.com`;
    const q = i % 3 === 0 ? `${x}.ns${i % NAMESPACES}.svc.cluster.local` : i % 3 === 1 ? `${x}.svc.cluster.local` : `${x}.cluster.local`;
    lines.push(`${q} ${i & 1 ? 'AAAA' : 'A'}`);
  }
  return writeLines(file, lines);
}

/** Repeated external names for the pod line: 100 names dnsmasq answers from its cache. */
export function externalFile(file) {
  const lines = [];
  for (let i = 0; i < 100; i++) lines.push(`www.site${i}.example.org A`);
  return writeLines(file, lines);
}

function shuffle(a, rand) {
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [a[i], a[j]] = [a[j], a[i]];
  }
}
