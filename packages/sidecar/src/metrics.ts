// The sidecar's metrics, named exactly as the original's so dashboards keep working
// (kubernetes/dns pkg/sidecar): counters without `_total`, the dnsmasq cache size as a counter, one histogram
// and one error counter per probe. Our own registry: nothing leaks in from other modules.
import { Counter, Gauge, Histogram, Registry, exponentialBuckets } from 'prom-client';
import { collectProcessMetrics } from '@kube-dns/config/process-metrics';
import type { CacheStat } from './dnsmasq-stats.js';

/** prometheus.BuildFQName: the non-empty parts joined with '_'. */
export const fqName = (...parts: string[]) => parts.filter((p) => p !== '').join('_');

/** ExponentialBuckets(0.25, 2, 16): 0.25 ms … 8192 ms. */
export const PROBE_LATENCY_BUCKETS = exponentialBuckets(0.25, 2, 16);

const CACHE_METRICS: Record<CacheStat, { name: string; help: string }> = {
  hits: { name: 'hits', help: 'Number of DNS cache hits (from start of process)' },
  misses: { name: 'misses', help: 'Number of DNS cache misses (from start of process)' },
  evictions: { name: 'evictions', help: 'Counter of DNS cache evictions (from start of process)' },
  insertions: { name: 'insertions', help: 'Counter of DNS cache insertions (from start of process)' },
  cachesize: { name: 'max_size', help: 'Maximum size of the DNS cache' },
};

export interface ProbeMetrics {
  latencyMs: Histogram;
  errors: Counter;
}

export interface SidecarMetrics {
  registry: Registry;
  cache: Record<CacheStat, Counter>;
  /** Failed dnsmasq statistics polls. */
  errors: Counter;
  upstreamQueries: Counter<'server'>;
  upstreamFailures: Counter<'server'>;
  /** 1 when the server answered the sidecar's own check, 0 when it did not (dnsmasq-poller.ts). */
  upstreamUp: Gauge<'server'>;
  probes: Map<string, ProbeMetrics>;
}

export function createMetrics(namespace: string, probeLabels: readonly string[], opts: { processMetrics?: boolean } = {}): SidecarMetrics {
  const registry = new Registry();
  const registers = [registry];
  const dnsmasq = (name: string) => fqName(namespace, 'dnsmasq', name);
  const cache = Object.fromEntries(
    Object.entries(CACHE_METRICS).map(([stat, m]) => [stat, new Counter({ name: dnsmasq(m.name), help: m.help, registers })]),
  ) as Record<CacheStat, Counter>;
  const errors = new Counter({ name: dnsmasq('errors'), help: 'Number of errors that have occurred getting metrics', registers });
  const upstreamQueries = new Counter({
    name: dnsmasq('server_queries'),
    help: 'Queries dnsmasq sent to each upstream server (from servers.bind, from start of process)',
    labelNames: ['server'] as const,
    registers,
  });
  const upstreamFailures = new Counter({
    name: dnsmasq('server_failures'),
    help: 'Queries to each upstream server that failed (from servers.bind, from start of process)',
    labelNames: ['server'] as const,
    registers,
  });
  const upstreamUp = new Gauge({
    name: dnsmasq('server_up'),
    help: "1 when the upstream or stub-domain server answered the sidecar's own check (CHAOS id.server. TXT and . NS, any reply to either) within 2 s, 0 when it did not; no series while dnsmasq's server list cannot be read",
    labelNames: ['server'] as const,
    registers,
  });
  const probes = new Map<string, ProbeMetrics>();
  for (const label of probeLabels) {
    probes.set(label, {
      latencyMs: new Histogram({
        name: fqName(namespace, 'probe', `${label}_latency_ms`),
        help: `Latency of the DNS probe request ${label}`,
        buckets: PROBE_LATENCY_BUCKETS,
        registers,
      }),
      errors: new Counter({ name: fqName(namespace, 'probe', `${label}_errors`), help: `Count of errors in name resolution of ${label}`, registers }),
    });
  }
  // process_* as the original's Go client had, plus Node's own (heap, GC), but not prom-client's
  // event-loop lag gauges: their monitor costs the sidecar 1.1 MB, and its loop is not what an
  // operator watches (@kube-dns/config/process-metrics)
  if (opts.processMetrics !== false) collectProcessMetrics(registry);
  return { registry, cache, errors, upstreamQueries, upstreamFailures, upstreamUp, probes };
}
