#!/usr/bin/env node
// What one EndpointSlice change of a large headless Service costs the query that follows it
// (docs/hot-path.md, "A headless service's view follows its slices"): the zone alone, no sockets.
// A Service of --endpoints endpoints (default 1,000, 5,000 and 20,000) in slices of 100, half of
// them with a hostname, one in seven not ready; its view built once; then --changes times (default
// 40) one slice replaced, as a rolling update does, and the Service's view asked, the time of both
// taken together. Prints min / median / max in ms per size. Needs a build (npx tsc -b).
//   node scripts/bench-headless-churn.mjs [--endpoints N] [--changes N]
import { performance } from 'node:perf_hooks';
import { Zone } from '../packages/kube-dns/dist/src/records/zone.js';

const arg = (name) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : undefined;
};
const sizes = arg('--endpoints') ? [arg('--endpoints')] : [1000, 5000, 20000];
const changes = arg('--changes') ?? 40;
const ZONE = 'cluster.local';
const ports = Object.freeze([Object.freeze({ name: 'pg', port: 5432, protocol: 'TCP' })]);

/**
 * Slice `i` of the Service in its `version`th form: the same addresses, readiness and hostnames
 * moved. Each slice's versions count up one by one, so a change is never the slice it replaces
 * (the form comes back every 14 versions: until 2026-11-28 the version was the change's number,
 * and at 5,000 and 20,000 endpoints two changes in 40 gave a slice its form again, which setSlice
 * skips).
 */
function slice(i, version) {
  const endpoints = Array.from({ length: 100 }, (_, k) => ({
    addresses: [`10.${(i >> 8) & 255}.${i & 255}.${k}`],
    hostname: (k + version) % 2 ? `pg-${i}-${k}` : '',
    ready: (k + version) % 7 !== 0,
  }));
  return { namespace: 'db', name: `big-${i}`, serviceName: 'big', addressType: 'IPv4', ports, endpoints };
}

for (const n of sizes) {
  const zone = new Zone();
  zone.setService({ namespace: 'db', name: 'big', kind: 'Headless', clusterIPs: [], externalName: '', ports: [], publishNotReadyAddresses: false });
  const slices = Math.ceil(n / 100);
  for (let i = 0; i < slices; i++) zone.setSlice(slice(i, 0));
  const service = () => zone.getService('db', 'big');
  zone.headless(service(), ZONE);
  const times = [];
  const versions = new Array(slices).fill(0);
  for (let r = 0; r < changes; r++) {
    const i = r % slices;
    const next = slice(i, ++versions[i]);
    const t = performance.now();
    zone.setSlice(next);
    zone.headless(service(), ZONE);
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(2);
  process.stdout.write(`${n.toLocaleString('en')} endpoints: one slice changed and the view asked, ${changes} times: min ${at(0)} / median ${at(0.5)} / max ${at(1)} ms\n`);
}
