// dnsmasq's statistics restart from zero when dnsmasq restarts, but exported counters must not
// go down. The original's rule (kubernetes/dns pkg/sidecar): add the growth since the last reading, and take
// any reading, even a lower one, as the new base.
export class MonotonicTracker {
  private readonly cached = new Map<string, number>();

  /** The amount to add to the exported counter `key` for this reading (0 when it did not grow). */
  delta(key: string, reading: number): number {
    const previous = this.cached.get(key) ?? 0;
    this.cached.set(key, Math.max(reading, 0));
    return reading > previous ? reading - previous : 0;
  }

  /** The last reading taken as base for `key`. */
  base(key: string): number | undefined {
    return this.cached.get(key);
  }
}
