// Prometheus metrics of kube-dns. The original's skydns_* names stay (dashboards and alerts use
// them); the kubedns_* ones are ours and say more.
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import client, { type Counter, Registry } from 'prom-client';
import { collectProcessMetrics } from '@kube-dns/config/process-metrics';
import type { Transport } from '@kube-dns/dns-client';
import type { QueryObserver, System } from '../server/handler.js';
import type { TcpStats } from '../server/tcp.js';
import { rcodeName } from '../server/wire.js';
import { FastHistogram, registerScraped, type Value } from './query-metrics.js';
import { watchStalls, type StallWatch } from '../runtime/stall-watch.js';

const TRANSPORTS = ['udp', 'tcp'] as const;
const SYSTEMS = ['auth', 'recursive', 'reverse'] as const;
/** The original's error causes: a reply with TC counts as truncated whatever its rcode (skydns's ReportErrorCount). */
const CAUSES = ['nxdomain', 'servfail', 'refused', 'truncated'] as const;
const SKY_DURATION_BUCKETS = [0.001, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/**
 * Ours: finer below a millisecond, and every bound of the original's too (0.003 and 10 were added
 * for it), so the original's histogram and request count are summed from ours when scraped and a
 * query records its duration once (skyDurationValues).
 */
const DURATION_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** For each of the original's bounds, the index of the same bound in ours. */
const SKY_IN_OURS = SKY_DURATION_BUCKETS.map((b) => {
  const i = DURATION_BUCKETS.indexOf(b);
  if (i < 0) throw new Error(`duration bucket ${b} of the original's is missing from ours`);
  return i;
});
const SKY_SIZE_BUCKETS = [0, 512, 1024, 1500, 2048, 4096, 8192, 12288, 16384, 20480, 24576, 28672, 32768, 36864, 40960, 45056, 49152, 53248, 57344, 61440, 65536];
/**
 * qtypes with a label of their own; every other number a client sends is counted as 'other', so
 * the series of kubedns_dns_requests_total stay a small fixed set whatever arrives on the wire.
 */
const QTYPE_LABELS = ['other', 'A', 'NS', 'CNAME', 'SOA', 'PTR', 'MX', 'TXT', 'AAAA', 'SRV', 'NAPTR', 'DS', 'DNSKEY', 'SVCB', 'HTTPS', 'IXFR', 'AXFR', 'ANY', 'CAA'];
/** qtype number → index in QTYPE_LABELS (0: other): one array read per query. */
const QTYPE_INDEX = new Uint8Array(65536);
for (const [n, name] of [[1, 'A'], [2, 'NS'], [5, 'CNAME'], [6, 'SOA'], [12, 'PTR'], [15, 'MX'], [16, 'TXT'], [28, 'AAAA'], [33, 'SRV'], [35, 'NAPTR'], [43, 'DS'], [48, 'DNSKEY'], [64, 'SVCB'], [65, 'HTTPS'], [251, 'IXFR'], [252, 'AXFR'], [255, 'ANY'], [257, 'CAA']] as const) {
  QTYPE_INDEX[n] = QTYPE_LABELS.indexOf(name);
}

export interface KubeDnsMetricsOptions {
  /** PROMETHEUS_NAMESPACE / PROMETHEUS_SUBSYSTEM of the original (skydns / skydns). */
  skydnsNamespace?: string;
  skydnsSubsystem?: string;
}

export class KubeDnsMetrics implements QueryObserver {
  readonly registry = new Registry();
  /** index (qtype label index << 7 | rcode << 1 | transport) → queries: one array add per query */
  private readonly requests = new Float64Array(QTYPE_LABELS.length << 7);
  /** index: transport * 3 + system */
  private readonly duration = Array.from({ length: 6 }, () => new FastHistogram(DURATION_BUCKETS));
  private readonly skySize = Array.from({ length: 3 }, () => new FastHistogram(SKY_SIZE_BUCKETS));
  /** index: system * 4 + cause (CAUSES) */
  private readonly skyErrors = new Float64Array(12);
  private cacheHits = 0;
  private cacheMisses = 0;

  private readonly loopDelay: EventLoopDelay;
  private readonly stalls: StallWatch | undefined;

  readonly configReloads: Counter;
  readonly configRejects: Counter;

  constructor(opts: KubeDnsMetricsOptions = {}, gauges: GaugeSources = {}) {
    const r = this.registry;
    // prom-client's process_* and nodejs_*, but not its nodejs_eventloop_lag_* (eight gauges,
    // each a read of a histogram that is never reset, its standard deviation among them): they
    // measure what kubedns_event_loop_delay_* measures, with a second monitor, at a cost on every
    // scrape; no dashboard or rule of ours reads them. Nor nodejs_gc_duration_seconds: its observer
    // of every collection puts a detour through JavaScript on the query loop after each scavenge,
    // which doubled the p99 at a steady rate (docs/hot-path.md, "The GC observer"); a collection
    // that stalls the loop shows in kubedns_event_loop_delay_* and kubedns_event_loop_stalls_total
    collectProcessMetrics(r, { gcDuration: false });
    const sky = `${opts.skydnsNamespace ?? 'skydns'}_${opts.skydnsSubsystem ?? 'skydns'}_dns`;
    registerScraped(r, 'kubedns_dns_requests_total', 'DNS queries answered, by query type, response code and transport.', 'counter', () => {
      // a loop over the 2,432 cells, not a spread and a flatMap (150 µs a scrape): most are 0
      const out: Value[] = [];
      const req = this.requests;
      for (let k = 0; k < req.length; k++) {
        const value = req[k]!;
        if (value !== 0) out.push({ value, labels: { qtype: QTYPE_LABELS[k >> 7]!, rcode: rcodeName((k >> 1) & 0x3f), transport: k & 1 ? 'tcp' : 'udp' } });
      }
      return out;
    });
    registerScraped(r, 'kubedns_dns_request_duration_seconds', 'Time from a query arriving to its reply being handed to the socket.', 'histogram', () =>
      this.duration.flatMap((h, i) => (h.count ? h.values('kubedns_dns_request_duration_seconds', { transport: TRANSPORTS[i / 3 | 0]!, system: SYSTEMS[i % 3]! }) : [])),
    );
    registerScraped(r, 'kubedns_dns_response_cache_hits_total', 'Replies served from the encoded-response cache.', 'counter', () => [{ value: this.cacheHits, labels: {} }]);
    registerScraped(r, 'kubedns_dns_response_cache_misses_total', 'Replies built from the zone (not in the response cache).', 'counter', () => [{ value: this.cacheMisses, labels: {} }]);
    // the original's per-system count and duration: ours summed over both transports
    const bySystem = (i: number) => [this.duration[i]!, this.duration[3 + i]!] as const;
    registerScraped(r, `${sky}_request_count_total`, 'Counter of DNS requests made.', 'counter', () =>
      SYSTEMS.flatMap((system, i) => {
        const [udp, tcp] = bySystem(i);
        return udp.count + tcp.count ? [{ value: udp.count + tcp.count, labels: { system } }] : [];
      }),
    );
    registerScraped(r, `${sky}_request_duration_seconds`, 'Histogram of the time (in seconds) each request took to resolve.', 'histogram', () =>
      SYSTEMS.flatMap((system, i) => skyDurationValues(`${sky}_request_duration_seconds`, system, bySystem(i))),
    );
    registerScraped(r, `${sky}_response_size_bytes`, 'Size of the returns response in bytes.', 'histogram', () =>
      this.skySize.flatMap((h, i) => (h.count ? h.values(`${sky}_response_size_bytes`, { system: SYSTEMS[i]! }) : [])),
    );
    registerScraped(r, `${sky}_error_count_total`, 'Counter of DNS requests resulting in an error.', 'counter', () =>
      [...this.skyErrors].flatMap((value, i) => (value ? [{ value, labels: { system: SYSTEMS[i / 4 | 0]!, cause: CAUSES[i % 4]! } }] : [])),
    );
    registerScraped(r, `${sky}_cachemiss_count_total`, 'Counter of DNS requests that result in a cache miss.', 'counter', () => [{ value: this.cacheMisses, labels: { cache: 'response' } }]);
    this.configReloads = new client.Counter({ name: 'kubedns_config_reloads_total', help: 'Valid ConfigMap changes applied.', registers: [r] });
    this.configRejects = new client.Counter({ name: 'kubedns_config_rejects_total', help: 'Invalid ConfigMap changes ignored (the last good config stays).', registers: [r] });
    registerGauges(r, gauges);
    this.loopDelay = new EventLoopDelay(r);
    registerCpuWait(r);
    this.stalls = watchStalls(STALL_MS);
    const stalls = this.stalls?.counts;
    if (stalls) {
      registerScraped(r, 'kubedns_event_loop_stalls_total', `Event-loop stalls over ${STALL_MS} ms, by cause: cpu_wait when the loop's thread waited for a CPU for at least half of the stall (the node's contention or a CPU quota), process otherwise (kube-dns's own work or its garbage collector).`, 'counter', () => [
        { value: stalls.cpuWait, labels: { cause: 'cpu_wait' } },
        { value: stalls.process, labels: { cause: 'process' } },
      ]);
    }
  }

  /** Stops the event-loop samplers (neither keeps a handle that holds the process open). */
  close(): void {
    this.loopDelay.close();
    this.stalls?.stop();
  }

  /** The hot path: numbers added in place, nothing allocated. */
  observe(qtype: number, rcode: number, transport: Transport, system: System, seconds: number, size: number, cacheHit: boolean, truncated = false): void {
    const t = transport === 'udp' ? 0 : 1;
    this.requests[(QTYPE_INDEX[qtype & 0xffff]! << 7) | ((rcode & 0x3f) << 1) | t]!++;
    const sys = system === 'auth' ? 0 : system === 'recursive' ? 1 : 2;
    this.duration[t * 3 + sys]!.observe(seconds);
    this.skySize[sys]!.observe(size);
    if (truncated) this.skyErrors[sys * 4 + 3]!++;
    else if (rcode === 3) this.skyErrors[sys * 4]!++;
    else if (rcode === 2) this.skyErrors[sys * 4 + 1]!++;
    else if (rcode === 5) this.skyErrors[sys * 4 + 2]!++;
    if (cacheHit) this.cacheHits++;
    else this.cacheMisses++;
  }
}

/** The original's duration histogram of one system, from ours over both transports (see DURATION_BUCKETS). */
function skyDurationValues(name: string, system: string, parts: readonly FastHistogram[]): Value[] {
  let count = 0;
  let sum = 0;
  for (const h of parts) {
    count += h.count;
    sum += h.sum;
  }
  if (count === 0) return [];
  const out: Value[] = [];
  let acc = 0;
  let i = 0;
  SKY_DURATION_BUCKETS.forEach((le, j) => {
    for (; i <= SKY_IN_OURS[j]!; i++) for (const h of parts) acc += h.counts[i]!;
    out.push({ value: acc, labels: { system, le }, metricName: `${name}_bucket` });
  });
  out.push({ value: count, labels: { system, le: '+Inf' }, metricName: `${name}_bucket` });
  out.push({ value: sum, labels: { system }, metricName: `${name}_sum` });
  out.push({ value: count, labels: { system }, metricName: `${name}_count` });
  return out;
}

export interface GaugeSources {
  /** kind → count (services, endpoints, pods, ...) */
  records?: () => Record<string, number>;
  /** resource → stats of its list/watch */
  sync?: () => Record<string, { objects?: number; relists?: number; watchRestarts?: number; lastSyncAt?: number | null; lastEventAt?: number | null; lastHeardAt?: number | null; errors?: number }>;
  forwarders?: () => Map<string, { requests: number; failures: number }>;
  cacheEntries?: () => number;
  cacheBytes?: () => number;
  synced?: () => boolean;
  /** Upstreams found to send our own queries back to us. */
  loopsDetected?: () => number;
  /** Servers dropped as loops now (upstreams, and stub servers for their domain): until the config changes. */
  loopsActive?: () => number;
}

function registerGauges(r: Registry, g: GaugeSources): void {
  // counters mirrored from monotonic sources: what was already added, per series
  const seen = new Map<string, number>();
  new client.Gauge({
    name: 'kubedns_records',
    help: 'Objects held in the zone, by kind.',
    labelNames: ['kind'],
    registers: [r],
    collect() {
      for (const [k, v] of Object.entries(g.records?.() ?? {})) this.set({ kind: k }, v);
    },
  });
  new client.Gauge({
    name: 'kubedns_synced',
    help: '1 once the first list of Services and EndpointSlices is in the zone.',
    registers: [r],
    collect() {
      this.set(g.synced?.() ? 1 : 0);
    },
  });
  new client.Gauge({
    name: 'kubedns_response_cache_entries',
    help: 'Encoded replies held by the response cache.',
    registers: [r],
    collect() {
      this.set(g.cacheEntries?.() ?? 0);
    },
  });
  new client.Gauge({
    name: 'kubedns_response_cache_bytes',
    help: 'Memory held by the response cache (replies, keys and bookkeeping), as bounded by --response-cache-bytes.',
    registers: [r],
    collect() {
      this.set(g.cacheBytes?.() ?? 0);
    },
  });
  const syncGauge = (name: string, help: string, field: 'lastSyncAt' | 'lastEventAt' | 'lastHeardAt' | 'objects', scale = 1) =>
    new client.Gauge({
      name,
      help,
      labelNames: ['resource'],
      registers: [r],
      collect() {
        for (const [res, s] of Object.entries(g.sync?.() ?? {})) if (typeof s[field] === 'number') this.set({ resource: res }, s[field]! * scale);
      },
    });
  syncGauge('kubedns_kube_last_sync_timestamp_seconds', 'When the last full list of the resource completed (Unix time).', 'lastSyncAt', 1 / 1000);
  syncGauge('kubedns_kube_last_event_timestamp_seconds', 'When the last watch event of the resource arrived (Unix time).', 'lastEventAt', 1 / 1000);
  syncGauge('kubedns_kube_last_heard_timestamp_seconds', 'When the API server was last heard from about the resource: a list, any watch event (bookmarks included) or a watch it closed (Unix time).', 'lastHeardAt', 1 / 1000);
  syncGauge('kubedns_kube_objects', 'Objects of the resource known from list/watch.', 'objects');
  const syncCounter = (name: string, help: string, field: 'relists' | 'watchRestarts' | 'errors') =>
    new client.Counter({
      name,
      help,
      labelNames: ['resource'],
      registers: [r],
      collect() {
        for (const [res, s] of Object.entries(g.sync?.() ?? {})) {
          const v = s[field] ?? 0;
          const cur = seen.get(`${name}|${res}`) ?? 0;
          // inc(0) too: the series exists from the first scrape, so increase() sees the first error
          this.inc({ resource: res }, Math.max(0, v - cur));
          seen.set(`${name}|${res}`, Math.max(v, cur));
        }
      },
    });
  syncCounter('kubedns_kube_relists_total', 'Full lists of the resource after the initial one (after 410 Gone, after errors).', 'relists');
  syncCounter('kubedns_kube_watch_restarts_total', 'Watches of the resource that ended and were started again.', 'watchRestarts');
  syncCounter('kubedns_kube_errors_total', 'Failed list or watch requests of the resource.', 'errors');
  const fwd = (name: string, help: string, field: 'requests' | 'failures') =>
    new client.Counter({
      name,
      help,
      labelNames: ['server'],
      registers: [r],
      collect() {
        const servers = g.forwarders?.() ?? new Map();
        for (const [server, s] of servers) {
          const cur = seen.get(`${name}|${server}`) ?? 0;
          this.inc({ server }, Math.max(0, s[field] - cur)); // from 0, as above
          seen.set(`${name}|${server}`, Math.max(s[field], cur));
        }
        // a server the forwarder no longer counts (forward/forwarder.ts serverStats): its series goes
        for (const key of seen.keys()) {
          if (!key.startsWith(`${name}|`)) continue;
          const server = key.slice(name.length + 1);
          if (servers.has(server)) continue;
          this.remove({ server });
          seen.delete(key);
        }
      },
    });
  new client.Counter({
    name: 'kubedns_forward_loops_detected_total',
    help: 'Upstream nameservers, and stub-domain servers for their domain, dropped because they sent our own queries back to us (a forwarding loop).',
    registers: [r],
    collect() {
      const v = g.loopsDetected?.() ?? 0;
      const cur = seen.get('loops') ?? 0;
      if (v > cur) this.inc(v - cur);
      seen.set('loops', Math.max(v, cur));
    },
  });
  // the state, beside the counter: a loop found at start is counted before the first scrape, so
  // an alert on the counter's increase() never saw it; this stays up while the server is dropped
  new client.Gauge({
    name: 'kubedns_forward_loops_active',
    help: 'Upstream nameservers, and stub-domain servers for their domain, dropped now as forwarding loops (until the ConfigMap or resolv.conf changes).',
    registers: [r],
    collect() {
      this.set(g.loopsActive?.() ?? 0);
    },
  });
  fwd('kubedns_forward_requests_total', 'Queries sent to an upstream or stub-domain server.', 'requests');
  fwd('kubedns_forward_failures_total', 'Queries to an upstream or stub-domain server that timed out, failed or got SERVFAIL or REFUSED.', 'failures');
}

const LOOP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
/** A stall worth telling apart (runtime/stall-watch.ts): the bench's goal is none over 5 ms. */
const STALL_MS = 5;
/** The sampler's period: what it records is the time between its ticks, this plus the delay. */
const LOOP_RESOLUTION_MS = 10;

/**
 * kubedns_event_loop_delay_seconds (histogram) and kubedns_event_loop_delay_max_seconds (the worst
 * delay since the previous scrape): a stalled event loop delays every query, so an operator should
 * see it before users do. Sampled by Node's monitorEventLoopDelay (a libuv timer in C++, every
 * 10 ms: no JavaScript on the event loop), which records the time between its ticks: the delay
 * is that less the 10 ms period. At each scrape its samples are folded into cumulative buckets
 * (from its percentiles) and it starts afresh.
 */
class EventLoopDelay {
  private readonly h: IntervalHistogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  private readonly buckets = new Float64Array(LOOP_BUCKETS.length);
  private count = 0;
  private sum = 0;
  private lastMax = 0;

  constructor(r: Registry) {
    this.h.enable();
    registerScraped(r, 'kubedns_event_loop_delay_seconds', 'How late the event loop ran a 10 ms timer: the time a query may wait before it is even read.', 'histogram', () => {
      this.fold();
      const name = 'kubedns_event_loop_delay_seconds';
      const none: Record<string, string> = {};
      return [
        ...LOOP_BUCKETS.map((le, i) => ({ value: this.buckets[i]!, labels: { le } as Record<string, number | string>, metricName: `${name}_bucket` })),
        { value: this.count, labels: { le: '+Inf' } as Record<string, number | string>, metricName: `${name}_bucket` },
        { value: this.sum, labels: none, metricName: `${name}_sum` },
        { value: this.count, labels: none, metricName: `${name}_count` },
      ];
    });
    const takeMax = () => this.takeMax();
    new client.Gauge({
      name: 'kubedns_event_loop_delay_max_seconds',
      help: 'The longest event-loop delay since the previous scrape (by any scraper: a read resets it; alert on the kubedns_event_loop_delay_seconds histogram).',
      registers: [r],
      collect() {
        this.set(takeMax());
      },
    });
  }

  /** Adds the samples since the last fold to the cumulative series, then resets the sampler. */
  private fold(): void {
    const h = this.h;
    const n = h.count;
    if (n === 0) return;
    // the samples at or under each bucket, to the sample: the largest k whose k-th smallest delay
    // (percentile 100·k/n) is within the bucket, found by bisection. (h.percentiles lists only
    // coarse steps, 50, 75, 87.5, ...: read as shares, they counted one 150 ms stall as two.)
    for (let i = 0; i < LOOP_BUCKETS.length; i++) {
      const limitNs = (LOOP_BUCKETS[i]! * 1e3 + LOOP_RESOLUTION_MS) * 1e6;
      let lo = 0;
      let hi = n;
      while (lo < hi) {
        const k = (lo + hi + 1) >> 1;
        if (h.percentile((100 * k) / n) <= limitNs) lo = k;
        else hi = k - 1;
      }
      this.buckets[i]! += lo;
    }
    this.count += n;
    const period = LOOP_RESOLUTION_MS / 1e3;
    this.sum += Math.max(0, h.mean / 1e9 - period) * n;
    this.lastMax = Math.max(this.lastMax, h.max / 1e9 - period, 0);
    h.reset();
  }

  private takeMax(): number {
    this.fold();
    const m = this.lastMax;
    this.lastMax = 0;
    return m;
  }

  close(): void {
    this.h.disable();
  }
}

/**
 * kubedns_event_loop_cpu_wait_seconds_total: the time the event loop's thread was ready to run but
 * waited for a CPU (the kernel's run-queue delay, /proc/self/task/<pid>/schedstat, second field,
 * in ns), read at scrape time only. An event-loop stall with as much CPU wait behind it is the
 * node's CPU contention (neighbours, CFS scheduling), not kube-dns's own work: measured on the
 * bench's 2 cores, shared with dnsperf, most stalls of 4-6 ms were 3.5-6.5 ms of CPU wait. Not
 * exported where the kernel does not provide it (no schedstat).
 */
function registerCpuWait(r: Registry): void {
  const file = `/proc/self/task/${process.pid}/schedstat`;
  const read = (): number | undefined => {
    try {
      const ns = Number(readFileSync(file, 'latin1').split(' ')[1]);
      return Number.isFinite(ns) ? ns / 1e9 : undefined;
    } catch {
      return undefined;
    }
  };
  if (read() === undefined) return;
  registerScraped(r, 'kubedns_event_loop_cpu_wait_seconds_total', "Time the event loop's thread was ready to run but waited for a CPU (run-queue delay): event-loop delay that is CPU contention on the node, not kube-dns's work.", 'counter', () => [
    { value: read() ?? 0, labels: {} },
  ]);
}

/** Malformed queries (server/malformed.ts), by what became of them: `replied` (FORMERR/NOTIMP) or `dropped`. */
export function registerMalformedMetrics(r: Registry, m: { replied: number; dropped: number }): void {
  registerScraped(r, 'kubedns_dns_malformed_queries_total', 'Queries that could not be parsed, by what became of them: replied (FORMERR or NOTIMP, within a budget per second) or dropped.', 'counter', () => [
    { value: m.replied, labels: { action: 'replied' } },
    { value: m.dropped, labels: { action: 'dropped' } },
  ]);
}

/** The TCP listener's bounds at work (server/tcp.ts), over all its addresses (0.0.0.0 and [::]). */
export function registerTcpMetrics(r: Registry, listener: { stats(): TcpStats }): void {
  const stat = (pick: (s: TcpStats) => number) => pick(listener.stats());
  new client.Gauge({
    name: 'kubedns_tcp_connections',
    help: 'DNS-over-TCP connections open.',
    registers: [r],
    collect() {
      this.set(stat((s) => s.connections));
    },
  });
  new client.Gauge({
    name: 'kubedns_tcp_unsent_bytes',
    help: 'Reply bytes written to DNS-over-TCP connections that their clients have not taken yet.',
    registers: [r],
    collect() {
      this.set(stat((s) => s.bufferedBytes));
    },
  });
  registerScraped(
    r,
    'kubedns_tcp_connections_closed_total',
    'DNS-over-TCP connections closed by kube-dns to keep its bounds: evicted (the idle longest, at the connection cap), refused (at the cap, none idle), slow (a message arriving slower than the idle timeout), overflow (replies piling up for a client that does not read).',
    'counter',
    () => [
      { value: stat((s) => s.evicted), labels: { reason: 'evicted' } },
      { value: stat((s) => s.refused), labels: { reason: 'refused' } },
      { value: stat((s) => s.slowMessages), labels: { reason: 'slow' } },
      { value: stat((s) => s.overflowed), labels: { reason: 'overflow' } },
    ],
  );
}
