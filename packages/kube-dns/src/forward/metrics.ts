// Metrics of the forward cap, registered next to the others on kube-dns's registry.
import client, { type Registry } from 'prom-client';
import type { Forwarder } from './forwarder.js';

export function registerForwardCapMetrics(r: Registry, f: Forwarder): void {
  new client.Gauge({
    name: 'kubedns_forward_in_flight',
    help: 'Queries being forwarded right now (waiting for an upstream or stub-domain server).',
    registers: [r],
    collect() {
      this.set(f.inFlight);
    },
  });
  new client.Gauge({
    name: 'kubedns_forward_max_concurrent',
    help: 'The cap on forwards in flight (--max-concurrent-forwards).',
    registers: [r],
    collect() {
      this.set(f.maxConcurrent);
    },
  });
  let seen = 0;
  new client.Counter({
    name: 'kubedns_forward_rejected_total',
    help: 'Queries answered SERVFAIL at once because --max-concurrent-forwards forwards were in flight.',
    registers: [r],
    collect() {
      if (f.rejected > seen) this.inc(f.rejected - seen);
      seen = f.rejected;
    },
  });
}
