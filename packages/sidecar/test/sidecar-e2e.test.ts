// The original's sidecar e2e (as in the kubernetes/dns tests) against a real dnsmasq, with short intervals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { query } from '@kube-dns/dns-client';
import { freePort, startDnsmasq, startTestDnsServer } from '@kube-dns/testkit';
import { PROBE_LATENCY_BUCKETS, startSidecar } from '../src/index.js';
import { probe, testOptions } from './fixtures.js';
import { getHealth, scrape, value, waitFor } from './helpers.js';

test('metrics and health checks against a real dnsmasq (g.6 #41)', async (t) => {
  const upstream = await startTestDnsServer({ answerIp: '192.0.2.7' });
  t.after(() => upstream.close());
  const dm = await startDnsmasq(['--cache-size=1337', '--address=/ok.local/1.2.3.4', '--address=/nxdomain.local/', `--server=127.0.0.1#${upstream.port}`]);
  t.after(() => dm.stop());
  const deadPort = await freePort();

  const sidecar = await startSidecar(
    testOptions({
      dnsmasqPort: dm.port,
      // each poll waits as long as its interval for dnsmasq: 100 ms timed out on a loaded machine,
      // and kubedns_dnsmasq_errors must stay 0 below
      dnsmasqPollIntervalMs: 1000,
      probes: [probe('ok', dm.port, 'ok.local', 200), probe('nxdomain', dm.port, 'nx.local', 200), probe('notpresent', deadPort, 'notpresent.local', 200)],
    }),
  );
  t.after(() => sidecar.stop());

  const dns = { host: dm.host, port: dm.port };
  for (let i = 0; i < 100; i++) await query(dns, { name: 'localhost', type: 'A' });
  for (const name of ['a1.example', 'a2.example', 'a3.example']) await query(dns, { name, type: 'A' });

  const upstreamKey = { server: `127.0.0.1#${upstream.port}` };
  const { text, families } = await waitFor('metrics to reflect the queries and probes', async () => {
    const s = await scrape(sidecar.port);
    const f = s.families;
    const ready =
      value(f, 'kubedns_dnsmasq_hits')! > 100 &&
      value(f, 'kubedns_probe_notpresent_errors')! >= 5 &&
      value(f, 'kubedns_probe_nxdomain_errors')! >= 5 &&
      Number(f.get('kubedns_probe_ok_latency_ms')?.metrics[0]?.count) >= 5 &&
      // cache and upstream figures come from two questions to dnsmasq in each poll: wait for both
      // to have seen the three forwarded names, not for one of them
      value(f, 'kubedns_dnsmasq_server_queries', upstreamKey)! >= 3 &&
      value(f, 'kubedns_dnsmasq_misses')! >= 3 &&
      value(f, 'kubedns_dnsmasq_insertions')! >= 3;
    return ready && s;
  });

  assert.equal(value(families, 'kubedns_dnsmasq_max_size'), 1337);
  // The ok probe succeeds: nearly every attempt. Not every one: on a machine loaded enough to hold
  // a process back for its 2 s timeout (the suite under --repeat with other work running), an
  // attempt can time out, and the probe rightly counts that. A broken probe fails them all.
  const okErrors = value(families, 'kubedns_probe_ok_errors')!;
  const okCount = Number(families.get('kubedns_probe_ok_latency_ms')?.metrics[0]?.count);
  assert.ok(okErrors <= okCount / 4, `ok probe: ${okErrors} errors for ${okCount} answers`);
  assert.equal(value(families, 'kubedns_dnsmasq_errors'), 0);
  assert.ok(value(families, 'kubedns_dnsmasq_misses')! >= 3);
  assert.ok(value(families, 'kubedns_dnsmasq_insertions')! >= 3);
  assert.equal(value(families, 'kubedns_dnsmasq_evictions'), 0);
  assert.ok(value(families, 'kubedns_dnsmasq_server_failures', upstreamKey) !== undefined);

  // The original's names, types and help texts: dashboards and alerts match on them.
  const want: [string, string, string][] = [
    ['kubedns_dnsmasq_hits', 'COUNTER', 'Number of DNS cache hits (from start of process)'],
    ['kubedns_dnsmasq_misses', 'COUNTER', 'Number of DNS cache misses (from start of process)'],
    ['kubedns_dnsmasq_evictions', 'COUNTER', 'Counter of DNS cache evictions (from start of process)'],
    ['kubedns_dnsmasq_insertions', 'COUNTER', 'Counter of DNS cache insertions (from start of process)'],
    ['kubedns_dnsmasq_max_size', 'COUNTER', 'Maximum size of the DNS cache'],
    ['kubedns_dnsmasq_errors', 'COUNTER', 'Number of errors that have occurred getting metrics'],
    ['kubedns_probe_ok_latency_ms', 'HISTOGRAM', 'Latency of the DNS probe request ok'],
    ['kubedns_probe_ok_errors', 'COUNTER', 'Count of errors in name resolution of ok'],
    ['kubedns_probe_notpresent_errors', 'COUNTER', 'Count of errors in name resolution of notpresent'],
  ];
  for (const [name, type, help] of want) {
    assert.equal(families.get(name)?.type, type, name);
    assert.equal(families.get(name)?.help, help, name);
  }
  assert.doesNotMatch(text, /^kubedns_\S*_total/m);
  const buckets = Object.keys(families.get('kubedns_probe_ok_latency_ms')!.metrics[0]!.buckets!);
  assert.deepEqual(new Set(buckets), new Set([...PROBE_LATENCY_BUCKETS.map(String), '+Inf']));
  assert.deepEqual([PROBE_LATENCY_BUCKETS[0], PROBE_LATENCY_BUCKETS.at(-1), PROBE_LATENCY_BUCKETS.length], [0.25, 8192, 16]);
  assert.equal(families.get('process_cpu_seconds_total')?.type, 'COUNTER');
  assert.ok(families.has('process_resident_memory_bytes'));
  assert.ok(families.has('nodejs_heap_size_used_bytes'), "Node's own heap metrics");
  // not prom-client's event-loop lag gauges: their monitor costs the sidecar 1.1 MB
  assert.ok(![...families.keys()].some((n) => n.startsWith('nodejs_eventloop_lag')), 'no nodejs_eventloop_lag_*');

  const ok = await getHealth(sidecar.port, 'ok');
  assert.equal(ok.status, 200);
  assert.equal(ok.contentType, 'application/json');
  const okBody = JSON.parse(ok.body) as { IsOk: boolean; LatencySeconds: number; Err: string };
  assert.deepEqual(Object.keys(okBody), ['IsOk', 'LatencySeconds', 'Err']);
  assert.equal(okBody.IsOk, true);
  assert.ok(okBody.LatencySeconds > 0 && okBody.LatencySeconds < 2);
  assert.equal(okBody.Err, '');

  const nx = await getHealth(sidecar.port, 'nxdomain');
  assert.equal(nx.status, 503);
  assert.deepEqual(JSON.parse(nx.body), { IsOk: false, LatencySeconds: 0, Err: 'no RRs for domain "nx.local."' });
  const dead = await getHealth(sidecar.port, 'notpresent');
  assert.equal(dead.status, 503);
  assert.equal(JSON.parse(dead.body).Err, `udp 127.0.0.1:${deadPort}: connection refused`);

  const unknown = await getHealth(sidecar.port, 'nosuchprobe');
  assert.deepEqual([unknown.status, unknown.body], [404, '404 page not found\n']);
  assert.equal((await fetch(`http://127.0.0.1:${sidecar.port}/healthcheck/ok/`)).status, 404);
  const healthz = await fetch(`http://127.0.0.1:${sidecar.port}/healthz`);
  assert.equal(healthz.status, 200);
  assert.match(await healthz.text(), /^ok \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+ \+0000 UTC\)\n$/);
});

test('a custom --prometheus-path and namespace; failed dnsmasq polls count as errors', async (t) => {
  const deadPort = await freePort();
  const sidecar = await startSidecar(testOptions({ dnsmasqPort: deadPort, prometheusPath: '/stats', prometheusNamespace: 'dns', probes: [] }));
  t.after(() => sidecar.stop());
  assert.equal((await fetch(`http://127.0.0.1:${sidecar.port}/metrics`)).status, 404);
  const families = await waitFor('two failed polls', async () => {
    const s = await scrape(sidecar.port, '/stats');
    return value(s.families, 'dns_dnsmasq_errors')! >= 2 && s.families;
  });
  assert.equal(value(families, 'dns_dnsmasq_hits'), 0);
  assert.equal(value(families, 'dns_dnsmasq_max_size'), 0);
  assert.ok(!families.has('kubedns_dnsmasq_hits'));
});
