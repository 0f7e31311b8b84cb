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
    name: 'kubedns_forward_joined_in_flight',
    help: 'Queries waiting right now for the reply to an identical query being forwarded (at most --max-concurrent-forwards).',
    registers: [r],
    collect() {
      this.set(f.joining);
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
  const seen = { servfail: 0, dropped: 0 };
  new client.Counter({
    name: 'kubedns_forward_rejected_total',
    help: 'Queries refused because --max-concurrent-forwards forwards were in flight: answered SERVFAIL at once (action="servfail", at most --overflow-servfails-per-second) or not answered (action="dropped").',
    labelNames: ['action'],
    registers: [r],
    collect() {
      const now = { servfail: f.overflow.replied, dropped: f.overflow.dropped };
      for (const action of ['servfail', 'dropped'] as const) {
        this.inc({ action }, now[action] - seen[action]);
        seen[action] = now[action];
      }
    },
  });
}
