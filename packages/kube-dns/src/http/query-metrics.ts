// Per-query metrics at the cost of a few additions. prom-client hashes the label set on every
// inc() and observe(), even through a cached child: for the five series a query touches that
// measured 0.9 µs of CPU per query (about 7% of a core at 80k qps), against 0.03 µs here. The
// hot path only adds to numbers in preallocated arrays; prom-client renders them when /metrics
// is scraped, through custom metric objects (name, help, type, get()).
import type { Registry } from 'prom-client';

type Labels = Record<string, string | number>;
export interface Value {
  value: number;
  labels: Labels;
  metricName?: string;
}

/** What prom-client's Registry needs of a metric. */
class ScrapedMetric {
  readonly aggregator = 'sum';
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
    private readonly values: () => Value[],
  ) {}

  async get() {
    return { name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: this.aggregator };
  }

  reset(): void {
    /* counters of a running server are never reset */
  }
}

export function registerScraped(registry: Registry, name: string, help: string, type: 'counter' | 'histogram', values: () => Value[]): void {
  registry.registerMetric(new ScrapedMetric(name, help, type, values) as unknown as Parameters<Registry['registerMetric']>[0]);
}

/** A histogram: per-bucket counts (not cumulative) in a typed array, plus sum and count. */
export class FastHistogram {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly buckets: readonly number[]) {
    this.counts = new Float64Array(buckets.length);
  }

  observe(v: number): void {
    this.sum += v;
    this.count++;
    const b = this.buckets;
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }

  /** The Prometheus series: cumulative buckets, +Inf, sum, count. */
  values(name: string, labels: Labels): Value[] {
    const out: Value[] = [];
    let acc = 0;
    for (let i = 0; i < this.buckets.length; i++) {
      acc += this.counts[i]!;
      out.push({ value: acc, labels: { ...labels, le: this.buckets[i]! }, metricName: `${name}_bucket` });
    }
    out.push({ value: this.count, labels: { ...labels, le: '+Inf' }, metricName: `${name}_bucket` });
    out.push({ value: this.sum, labels, metricName: `${name}_sum` });
    out.push({ value: this.count, labels, metricName: `${name}_count` });
    return out;
  }
}
