// Polls dnsmasq's statistics every interval and exports them as monotonic counters.
import { performance } from 'node:perf_hooks';
import type { Logger } from '@kube-dns/config';
import { query } from '@kube-dns/dns-client';
import { CACHE_STATS, type DnsmasqAddress, readCacheStats, readUpstreamStats } from './dnsmasq-stats.js';
import type { SidecarMetrics } from './metrics.js';
import { MonotonicTracker } from './monotonic.js';
import { sleep } from './sleep.js';

export const STATS_TIMEOUT_MS = 2000;

/**
 * Whether a dnsmasq server (`ip#port`, as servers.bind names it) answers at all: two questions
 * at once, CHAOS `id.server. TXT` and `. NS`, where any reply to either counts (a stub domain's
 * authoritative server may refuse them; it still answered). dnsmasq's own `failed` count in
 * servers.bind stays 0 when a server times out, refuses or fails (2.90), so without this check a
 * dead upstream was invisible: its names timed out for every pod while every metric said nothing.
 * Two questions because each alone misjudged a live server: `. NS` is forwarded by a server that
 * does not recurse itself (kube-dns, the manifest's server for the cluster zone), which answers it
 * only after its own upstreams' deadline (5 s, past this check's 2 s) and so read as down whenever
 * those were; a CHAOS question is answered at once by kube-dns, dnsmasq, BIND or unbound, but some
 * resolvers drop that class.
 */
export async function serverAnswers(server: string, timeoutMs: number): Promise<boolean> {
  const hash = server.lastIndexOf('#');
  const host = hash < 0 ? server : server.slice(0, hash);
  const port = hash < 0 ? 53 : Number(server.slice(hash + 1));
  try {
    await Promise.any([
      query({ host, port }, { name: 'id.server.', type: 'TXT', class: 'CH', timeoutMs, transport: 'udp' }),
      query({ host, port }, { name: '.', type: 'NS', timeoutMs, transport: 'udp' }),
    ]);
    return true;
  } catch {
    return false;
  }
}

export class DnsmasqPoller {
  private readonly tracker = new MonotonicTracker();
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private failing = false;
  /** The servers last given a server_up series (one that leaves servers.bind loses its series). */
  private upServers = new Set<string>();

  constructor(
    private readonly server: DnsmasqAddress,
    private readonly intervalMs: number,
    private readonly metrics: SidecarMetrics,
    private readonly log: Logger,
    // 2 s whatever the interval, as the original's client (a shorter interval only means the
    // next poll starts when this one is done: the loop is sequential)
    private readonly timeoutMs = STATS_TIMEOUT_MS,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  /** One poll: cache statistics (any failure counts one error), then per-upstream counts. */
  async pollOnce(): Promise<void> {
    let stats;
    try {
      stats = await readCacheStats(this.server, this.timeoutMs);
    } catch (e) {
      this.metrics.errors.inc();
      if (!this.failing) this.log.warn({ err: (e as Error).message, dnsmasq: this.server }, 'cannot read dnsmasq statistics');
      else this.log.debug({ err: (e as Error).message }, 'cannot read dnsmasq statistics');
      this.failing = true;
      this.forgetServers();
      return;
    }
    if (this.failing) this.log.info({ dnsmasq: this.server }, 'reading dnsmasq statistics again');
    this.failing = false;
    for (const stat of CACHE_STATS) {
      const d = this.tracker.delta(stat, stats[stat]);
      if (d > 0) this.metrics.cache[stat].inc(d);
    }
    // Not part of the original's poll: a dnsmasq without servers.bind must not count errors.
    let upstreams;
    try {
      upstreams = await readUpstreamStats(this.server, this.timeoutMs);
    } catch (e) {
      this.log.debug({ err: (e as Error).message }, 'cannot read servers.bind');
      this.forgetServers();
      return;
    }
    for (const u of upstreams) {
      const q = this.tracker.delta(`queries ${u.server}`, u.queries);
      const f = this.tracker.delta(`failures ${u.server}`, u.failures);
      // inc(0) creates the series, so a new upstream shows up at 0 instead of missing.
      this.metrics.upstreamQueries.inc({ server: u.server }, q);
      this.metrics.upstreamFailures.inc({ server: u.server }, f);
    }
    // every server checked at once: one poll waits one timeout at most
    const now = new Set(upstreams.map((u) => u.server));
    const answered = await Promise.all([...now].map((server) => serverAnswers(server, this.timeoutMs)));
    [...now].forEach((server, i) => this.metrics.upstreamUp.set({ server }, answered[i] ? 1 : 0));
    for (const gone of this.upServers) if (!now.has(gone)) this.metrics.upstreamUp.remove({ server: gone });
    this.upServers = now;
  }

  /**
   * No server_up series while dnsmasq's server list cannot be read: a last value kept as if fresh
   * would hide an outage from the alert (a stale 1) or keep it firing after recovery (a stale 0).
   */
  private forgetServers(): void {
    for (const gone of this.upServers) this.metrics.upstreamUp.remove({ server: gone });
    this.upServers = new Set();
  }

  private async run(): Promise<void> {
    const { signal } = this.abort;
    while (!signal.aborted) {
      const started = performance.now();
      await this.pollOnce();
      await sleep(this.intervalMs - (performance.now() - started), signal);
    }
  }
}
