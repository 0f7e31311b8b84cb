// Prometheus metrics of kube-dns. The original's skydns_* names stay (dashboards and alerts use
// them); the kubedns_* ones are ours and say more.
import client, { type Counter, type Histogram, Registry } from 'prom-client';
import type { Transport } from '@kube-dns/dns-client';
import { qtypeName, type QueryObserver, type System } from '../server/handler.js';

interface SystemChildren {
  duration: { observe(v: number): void };
  skyRequests: { inc(n?: number): void };
  skyDuration: { observe(v: number): void };
  skySize: { observe(v: number): void };
  nxdomain: { inc(n?: number): void };
  servfail: { inc(n?: number): void };
  refused: { inc(n?: number): void };
}

const RCODE_NAMES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];
const rcodeName = (n: number) => RCODE_NAMES[n] ?? `RCODE${n}`;

export interface KubeDnsMetricsOptions {
  /** PROMETHEUS_NAMESPACE / PROMETHEUS_SUBSYSTEM of the original (skydns / skydns). */
  skydnsNamespace?: string;
  skydnsSubsystem?: string;
}

export class KubeDnsMetrics implements QueryObserver {
  readonly registry = new Registry();
  private readonly requests: Counter<'qtype' | 'rcode' | 'transport'>;
  private readonly duration: Histogram<'transport' | 'system'>;
  private readonly cacheHits: Counter;
  private readonly cacheMisses: Counter;
  private readonly skyRequests: Counter<'system'>;
  private readonly skyDuration: Histogram<'system'>;
  private readonly skySize: Histogram<'system'>;
  private readonly skyErrors: Counter<'system' | 'cause'>;
  private readonly skyCacheMiss: Counter<'cache'>;
  /** label children resolved once: prom-client hashes label objects on every call otherwise */
  private readonly requestChildren = new Map<number, { inc(n?: number): void }>();
  private readonly systemChildren = new Map<string, SystemChildren>();
  private readonly skyCacheMissResponse: { inc(n?: number): void };

  readonly configReloads: Counter;
  readonly configRejects: Counter;

  constructor(opts: KubeDnsMetricsOptions = {}, gauges: GaugeSources = {}) {
    const r = this.registry;
    client.collectDefaultMetrics({ register: r });
    const sky = `${opts.skydnsNamespace ?? 'skydns'}_${opts.skydnsSubsystem ?? 'skydns'}_dns`;
    this.requests = new client.Counter({
      name: 'kubedns_dns_requests_total',
      help: 'DNS queries answered, by query type, response code and transport.',
      labelNames: ['qtype', 'rcode', 'transport'],
      registers: [r],
    });
    this.duration = new client.Histogram({
      name: 'kubedns_dns_request_duration_seconds',
      help: 'Time from a query arriving to its reply being handed to the socket.',
      labelNames: ['transport', 'system'],
      buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [r],
    });
    this.cacheHits = new client.Counter({ name: 'kubedns_dns_response_cache_hits_total', help: 'Replies served from the encoded-response cache.', registers: [r] });
    this.cacheMisses = new client.Counter({ name: 'kubedns_dns_response_cache_misses_total', help: 'Replies built from the zone (not in the response cache).', registers: [r] });
    this.skyRequests = new client.Counter({ name: `${sky}_request_count_total`, help: 'Counter of DNS requests made.', labelNames: ['system'], registers: [r] });
    this.skyDuration = new client.Histogram({
      name: `${sky}_request_duration_seconds`,
      help: 'Histogram of the time (in seconds) each request took to resolve.',
      labelNames: ['system'],
      buckets: [0.001, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [r],
    });
    this.skySize = new client.Histogram({
      name: `${sky}_response_size_bytes`,
      help: 'Size of the returns response in bytes.',
      labelNames: ['system'],
      buckets: [0, 512, 1024, 1500, 2048, 4096, 8192, 12288, 16384, 20480, 24576, 28672, 32768, 36864, 40960, 45056, 49152, 53248, 57344, 61440, 65536],
      registers: [r],
    });
    this.skyErrors = new client.Counter({ name: `${sky}_error_count_total`, help: 'Counter of DNS requests resulting in an error.', labelNames: ['system', 'cause'], registers: [r] });
    this.skyCacheMiss = new client.Counter({ name: `${sky}_cachemiss_count_total`, help: 'Counter of DNS requests that result in a cache miss.', labelNames: ['cache'], registers: [r] });
    this.skyCacheMissResponse = this.skyCacheMiss.labels('response');
    this.configReloads = new client.Counter({ name: 'kubedns_config_reloads_total', help: 'Valid ConfigMap changes applied.', registers: [r] });
    this.configRejects = new client.Counter({ name: 'kubedns_config_rejects_total', help: 'Invalid ConfigMap changes ignored (the last good config stays).', registers: [r] });
    registerGauges(r, gauges);
  }

  observe(qtype: number, rcode: number, transport: Transport, system: System, seconds: number, size: number, cacheHit: boolean): void {
    const k = (qtype << 8) | (rcode << 2) | (transport === 'udp' ? 0 : 1);
    let c = this.requestChildren.get(k);
    if (!c) {
      c = this.requests.labels(qtypeName(qtype), rcodeName(rcode), transport);
      this.requestChildren.set(k, c);
    }
    c.inc();
    const s = this.perSystem(transport, system);
    s.duration.observe(seconds);
    s.skyRequests.inc();
    s.skyDuration.observe(seconds);
    s.skySize.observe(size);
    if (rcode === 3) s.nxdomain.inc();
    else if (rcode === 2) s.servfail.inc();
    else if (rcode === 5) s.refused.inc();
    if (cacheHit) this.cacheHits.inc();
    else {
      this.cacheMisses.inc();
      this.skyCacheMissResponse.inc();
    }
  }

  private perSystem(transport: Transport, system: System) {
    const k = `${transport}|${system}`;
    let s = this.systemChildren.get(k);
    if (!s) {
      s = {
        duration: this.duration.labels(transport, system),
        skyRequests: this.skyRequests.labels(system),
        skyDuration: this.skyDuration.labels(system),
        skySize: this.skySize.labels(system),
        nxdomain: this.skyErrors.labels(system, 'nxdomain'),
        servfail: this.skyErrors.labels(system, 'servfail'),
        refused: this.skyErrors.labels(system, 'refused'),
      };
      this.systemChildren.set(k, s);
    }
    return s;
  }
}

export interface GaugeSources {
  /** kind → count (services, endpoints, pods, ...) */
  records?: () => Record<string, number>;
  /** resource → stats of its list/watch */
  sync?: () => Record<string, { objects?: number; relists?: number; watchRestarts?: number; lastSyncAt?: number | null; lastEventAt?: number | null; errors?: number }>;
  forwarders?: () => Map<string, { requests: number; failures: number }>;
  cacheEntries?: () => number;
  synced?: () => boolean;
  /** Upstreams found to send our own queries back to us. */
  loopsDetected?: () => number;
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
  const syncGauge = (name: string, help: string, field: 'lastSyncAt' | 'lastEventAt' | 'objects', scale = 1) =>
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
          if (v > cur) this.inc({ resource: res }, v - cur);
          seen.set(`${name}|${res}`, Math.max(v, cur));
        }
      },
    });
  syncCounter('kubedns_kube_relists_total', 'Full lists of the resource (initial, after 410 Gone, after errors).', 'relists');
  syncCounter('kubedns_kube_watch_restarts_total', 'Watches of the resource that ended and were started again.', 'watchRestarts');
  syncCounter('kubedns_kube_errors_total', 'Failed list or watch requests of the resource.', 'errors');
  const fwd = (name: string, help: string, field: 'requests' | 'failures') =>
    new client.Counter({
      name,
      help,
      labelNames: ['server'],
      registers: [r],
      collect() {
        for (const [server, s] of g.forwarders?.() ?? []) {
          const cur = seen.get(`${name}|${server}`) ?? 0;
          if (s[field] > cur) this.inc({ server }, s[field] - cur);
          seen.set(`${name}|${server}`, Math.max(s[field], cur));
        }
      },
    });
  new client.Counter({
    name: 'kubedns_forward_loops_detected_total',
    help: 'Upstream nameservers dropped because they sent our own queries back to us (a forwarding loop).',
    registers: [r],
    collect() {
      const v = g.loopsDetected?.() ?? 0;
      const cur = seen.get('loops') ?? 0;
      if (v > cur) this.inc(v - cur);
      seen.set('loops', Math.max(v, cur));
    },
  });
  fwd('kubedns_forward_requests_total', 'Queries sent to an upstream or stub-domain server.', 'requests');
  fwd('kubedns_forward_failures_total', 'Queries to an upstream or stub-domain server that timed out, failed or got SERVFAIL.', 'failures');
}
