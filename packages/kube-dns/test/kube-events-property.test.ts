// Property: whatever sequence of API events arrives (adds, updates, deletes, watches dropped,
// history compacted so that a relist follows), the zone ends up answering exactly as a zone
// built from scratch from the final objects. Runs against the fake API server through the real
// list/watch code. FUZZ_RUNS raises the number of sequences (default 20).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { silentLogger } from '@kube-dns/config';
import { clusterIPService, endpointSlice, externalNameService, headlessService, startFakeApiServer, type FakeApiServer } from '@kube-dns/testkit';
import { KubeSync } from '../src/kube/index.js';
import { serviceFromKube, sliceFromKube } from '../src/records/from-kube.js';
import { Zone } from '../src/records/zone.js';
import { resolve } from '../src/resolve/resolve.js';

const NAMESPACES = ['a', 'b'] as const;
const SERVICES = ['s1', 's2', 's3'] as const;
const CLUSTER_IPS = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];
const ENDPOINT_IPS = ['10.1.0.1', '10.1.0.2', '10.1.0.3', 'fd00::1', 'fd00::2'];

type Command =
  | { op: 'service'; ns: string; name: string; kind: 'clusterip' | 'headless' | 'external'; ip: number; port: number }
  | { op: 'slice'; ns: string; svc: string; k: number; ips: number[]; named: boolean; port: number }
  | { op: 'deleteService'; ns: string; name: string }
  | { op: 'deleteSlice'; ns: string; svc: string; k: number }
  | { op: 'dropWatches'; abrupt: boolean }
  | { op: 'relist' }
  | { op: 'pause' };

const ns = fc.constantFrom(...NAMESPACES);
const svc = fc.constantFrom(...SERVICES);
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('service' as const), ns, name: svc, kind: fc.constantFrom('clusterip' as const, 'headless' as const, 'external' as const), ip: fc.nat(2), port: fc.constantFrom(80, 443) }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('slice' as const), ns, svc, k: fc.nat(1), ips: fc.uniqueArray(fc.nat(4), { maxLength: 3 }), named: fc.boolean(), port: fc.constantFrom(80, 8080) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('deleteService' as const), ns, name: svc }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('deleteSlice' as const), ns, svc, k: fc.nat(1) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('dropWatches' as const), abrupt: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ op: 'relist' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'pause' as const }) },
);

function apply(api: FakeApiServer, c: Command): void {
  switch (c.op) {
    case 'service': {
      const ports = [{ name: 'http', port: c.port }];
      const o =
        c.kind === 'clusterip'
          ? clusterIPService(c.ns, c.name, [CLUSTER_IPS[c.ip]!], ports)
          : c.kind === 'headless'
            ? headlessService(c.ns, c.name, ports)
            : externalNameService(c.ns, c.name, `${c.name}.example.org`);
      api.upsert('services', o);
      return;
    }
    case 'slice': {
      const ips = c.ips.map((i) => ENDPOINT_IPS[i]!);
      const family = ips.some((ip) => ip.includes(':')) ? 'IPv6' : 'IPv4';
      const eps = ips.filter((ip) => ip.includes(':') === (family === 'IPv6')).map((ip, i) => ({ ip, ...(c.named && { hostname: `h${i}` }) }));
      api.upsert('endpointslices', endpointSlice(c.ns, c.svc, `${c.svc}-${c.k}`, family, eps, [{ name: 'http', port: c.port }]));
      return;
    }
    case 'deleteService':
      api.remove('services', c.ns, c.name);
      return;
    case 'deleteSlice':
      api.remove('endpointslices', c.ns, `${c.svc}-${c.k}`);
      return;
    case 'dropWatches':
      api.faults.dropWatches({ abrupt: c.abrupt });
      return;
    case 'relist':
      // the next watch gets 410 Gone: a full relist, with deletions found by difference
      api.faults.compactHistory();
      api.faults.dropWatches();
      return;
    case 'pause':
      return;
  }
}

/** What the zone answers for every name the commands can create, in a canonical form. */
function answers(zone: Zone): string {
  const opts = { zone: 'cluster.local', ttl: 30, pods: 'insecure' as const, serial: 1 };
  const names: [string, string][] = [];
  for (const n of NAMESPACES) {
    for (const s of SERVICES) {
      const base = `${s}.${n}.svc.cluster.local`;
      for (const t of ['A', 'AAAA', 'SRV', 'CNAME']) names.push([base, t]);
      names.push([`_http._tcp.${base}`, 'SRV']);
      for (const h of ['h0', 'h1', 'h2']) names.push([`${h}.${base}`, 'A'], [`${h}.${base}`, 'AAAA']);
    }
  }
  for (const ip of [...CLUSTER_IPS, '10.1.0.1', '10.1.0.2', '10.1.0.3']) names.push([`${ip.split('.').reverse().join('.')}.in-addr.arpa`, 'PTR']);
  const canon = (rrs: unknown[]) => rrs.map((r) => JSON.stringify(r)).sort();
  return JSON.stringify(
    names.map(([name, type]) => {
      const r = resolve(zone, name, type, opts);
      return [name, type, r.rcode, canon(r.answers), canon(r.additionals)];
    }),
  );
}

function fromScratch(api: FakeApiServer): Zone {
  const z = new Zone();
  for (const o of api.list('services')) {
    const s = serviceFromKube(o as never);
    if (s) z.setService(s);
  }
  for (const o of api.list('endpointslices')) {
    const s = sliceFromKube(o as never);
    if (s) z.setSlice(s);
  }
  return z;
}

test('any sequence of API events leaves the zone equal to one built from the final objects', async () => {
  const runs = Number(process.env.FUZZ_RUNS ?? 20);
  await fc.assert(
    fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 25 }), async (cmds) => {
      const api = await startFakeApiServer({ bookmarkIntervalMs: 50 });
      const zone = new Zone();
      const sync = new KubeSync({ kc: api.kubeConfig(), zone, watchPods: false, log: silentLogger(), backoff: { initialMs: 5, maxMs: 50 } });
      try {
        // some objects exist before the first list, the rest arrive through watches
        const split = Math.floor(cmds.length / 3);
        for (const c of cmds.slice(0, split)) apply(api, c);
        sync.start();
        await sync.waitForSync(5000);
        for (const c of cmds.slice(split)) {
          apply(api, c);
          if (c.op === 'pause') await new Promise((r) => setTimeout(r, 20));
        }
        const want = answers(fromScratch(api));
        const deadline = Date.now() + 5000;
        for (;;) {
          const got = answers(zone);
          if (got === want) break;
          if (Date.now() > deadline) assert.equal(got, want, 'the zone did not converge to the final objects');
          await new Promise((r) => setTimeout(r, 20));
        }
      } finally {
        await sync.stop();
        await api.close();
      }
    }),
    { numRuns: runs, ...(process.env.FUZZ_SEED && { seed: Number(process.env.FUZZ_SEED) }) },
  );
});
