// /cache at 100k services: DNS keeps being answered while the listing is written, and the listing
// is complete. The queries come from a worker thread (its own event loop), so a gap between two
// answers is time kube-dns's event loop was not serving DNS.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { clusterIPService, endpointSlice, headlessService } from '@kube-dns/testkit';
import type { ZoneDump } from '../src/records/dump.js';
import type { ClientInput, DnsResult, HttpResult } from './cache-stream-client.js';
import { startCluster, waitSynced } from './integration-helpers.js';

const N = 100_000;
const HEADLESS_EVERY = 10;
/**
 * Generous against the few ms a slice of the listing takes; a synchronous listing takes seconds.
 * On a loaded machine the operating system alone can hold the test's threads for longer: then the
 * bound is 3 times the largest gap seen in the quiet seconds around the fetch (the noise floor).
 */
const MAX_GAP_MS = 50;
const QUIET_MS = 1500;

const ns = (i: number): string => `ns${i % 50}`;
const clusterIp = (i: number): string => `10.${96 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
const endpointIp = (i: number, k: number): string => `10.${128 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`.replace(/\.\d+$/, `.${((i & 63) << 2) + k}`);

test('/cache of 100k services streams while DNS queries keep being answered; the listing is complete', { timeout: 300_000 }, async (t) => {
  const c = await startCluster({
    seed: (api) => {
      for (let i = 0; i < N; i++) {
        if (i % HEADLESS_EVERY === 0) {
          api.upsert('services', headlessService(ns(i), `svc${i}`, [{ name: 'http', port: 80 }]));
          api.upsert('endpointslices', endpointSlice(ns(i), `svc${i}`, `svc${i}-x`, 'IPv4', [0, 1, 2].map((k) => ({ ip: endpointIp(i, k) })), [{ name: 'http', port: 8080 }]));
        } else {
          api.upsert('services', clusterIPService(ns(i), `svc${i}`, [clusterIp(i)], [{ name: 'http', port: 80 }]));
        }
      }
    },
  });
  t.after(() => c.stop());
  await waitSynced(c, 120_000);
  assert.equal(c.dns.zone.stats().services, N);

  // ClusterIP names spread over the zone, each asked with the answer it must get.
  const names: [string, string][] = [];
  for (let i = 1; i < N; i += 997) if (i % HEADLESS_EVERY !== 0) names.push([`svc${i}.${ns(i)}.svc.cluster.local`, clusterIp(i)]);
  const dns = new Worker(new URL('./cache-stream-client.js', import.meta.url), { workerData: { role: 'dns', dnsPort: c.dns.dnsPort, names } satisfies ClientInput });
  t.after(() => dns.terminate());
  await new Promise((resolve, reject) => dns.once('message', resolve).once('error', reject));
  const quietBefore = Date.now();
  await new Promise((r) => setTimeout(r, QUIET_MS));
  const http = new Worker(new URL('./cache-stream-client.js', import.meta.url), { workerData: { role: 'http', url: `http://127.0.0.1:${c.dns.httpPort}/cache` } satisfies ClientInput });
  t.after(() => http.terminate());
  const r = await new Promise<HttpResult>((resolve, reject) => http.once('message', resolve).once('error', reject));
  await new Promise((res) => setTimeout(res, QUIET_MS));
  dns.postMessage('stop');
  const q = await new Promise<DnsResult>((resolve, reject) => dns.once('message', resolve).once('error', reject));

  /** Largest time between two answers (or a window's edge and an answer) within [from, to]. */
  const maxGap = (from: number, to: number): number => {
    let prev = from;
    let max = 0;
    for (const at of q.answeredAt) {
      if (at < from) continue;
      if (at > to) break;
      max = Math.max(max, at - prev);
      prev = at;
    }
    return Math.max(max, to - prev);
  };
  const gap = maxGap(r.startedAt, r.endedAt);
  const noise = Math.max(maxGap(quietBefore, r.startedAt), maxGap(r.endedAt, r.endedAt + QUIET_MS));
  const bound = Math.max(MAX_GAP_MS, 3 * noise);
  const during = q.answeredAt.filter((at) => at >= r.startedAt && at <= r.endedAt).length;
  const body = Buffer.from(r.body).toString('utf8');
  t.diagnostic(
    `/cache: ${(body.length / 1e6).toFixed(1)} MB in ${(r.endedAt - r.startedAt).toFixed(0)} ms; ${during} DNS answers meanwhile, ` +
      `largest gap ${gap.toFixed(1)} ms (bound ${bound.toFixed(0)} ms; largest gap without /cache ${noise.toFixed(1)} ms)`,
  );

  assert.equal(r.status, 200);
  assert.deepEqual(q.wrong, [], 'every answer right');
  assert.equal(q.unanswered, 0, 'every query answered');
  assert.ok(gap < bound, `DNS stalled for ${gap.toFixed(1)} ms while /cache was written`);

  const d = JSON.parse(body) as ZoneDump;
  assert.equal(d.zone, 'cluster.local');
  assert.equal(d.services.length, N);
  const byName = new Map(d.services.map((s) => [`${s.namespace}/${s.name}`, s]));
  assert.equal(byName.size, N, 'each service once');
  for (let i = 0; i < N; i++) {
    const s = byName.get(`${ns(i)}/svc${i}`);
    assert.ok(s, `svc${i} listed`);
    const fqdn = `svc${i}.${ns(i)}.svc.cluster.local`;
    const addrs = s.records.filter((x) => x.name === fqdn && x.type === 'A').map((x) => x.data);
    const want = i % HEADLESS_EVERY === 0 ? [0, 1, 2].map((k) => endpointIp(i, k)) : [clusterIp(i)];
    assert.deepEqual(addrs.sort(), want.sort(), fqdn);
    // ClusterIP: A, SRV, _http._tcp SRV, PTR. Headless: 3 × (A at the name, A at the endpoint, SRV, _http SRV, PTR).
    assert.equal(s.records.length, i % HEADLESS_EVERY === 0 ? 15 : 4, `${fqdn}: ${JSON.stringify(s.records)}`);
  }
});
