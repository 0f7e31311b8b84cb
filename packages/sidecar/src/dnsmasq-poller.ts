// Polls dnsmasq's statistics every interval and exports them as monotonic counters.
import { performance } from 'node:perf_hooks';
import type { Logger } from '@kube-dns/config';
import { CACHE_STATS, type DnsmasqAddress, readCacheStats, readUpstreamStats } from './dnsmasq-stats.js';
import type { SidecarMetrics } from './metrics.js';
import { MonotonicTracker } from './monotonic.js';
import { sleep } from './sleep.js';

export const STATS_TIMEOUT_MS = 2000;

export class DnsmasqPoller {
  private readonly tracker = new MonotonicTracker();
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private failing = false;

  constructor(
    private readonly server: DnsmasqAddress,
    private readonly intervalMs: number,
    private readonly metrics: SidecarMetrics,
    private readonly log: Logger,
    private readonly timeoutMs = Math.min(STATS_TIMEOUT_MS, intervalMs),
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
      return;
    }
    if (this.failing) this.log.info({ dnsmasq: this.server }, 'reading dnsmasq statistics again');
    this.failing = false;
    for (const stat of CACHE_STATS) {
      const d = this.tracker.delta(stat, stats[stat]);
      if (d > 0) this.metrics.cache[stat].inc(d);
    }
    // Not part of the original's poll: a dnsmasq without servers.bind must not count errors.
    try {
      for (const u of await readUpstreamStats(this.server, this.timeoutMs)) {
        const q = this.tracker.delta(`queries ${u.server}`, u.queries);
        const f = this.tracker.delta(`failures ${u.server}`, u.failures);
        // inc(0) creates the series, so a new upstream shows up at 0 instead of missing.
        this.metrics.upstreamQueries.inc({ server: u.server }, q);
        this.metrics.upstreamFailures.inc({ server: u.server }, f);
      }
    } catch (e) {
      this.log.debug({ err: (e as Error).message }, 'cannot read servers.bind');
    }
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
