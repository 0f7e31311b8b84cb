// The process_* and nodejs_* metrics of prom-client's collectDefaultMetrics(), all of them but
// nodejs_eventloop_lag_*. Those eight gauges come from an event-loop-delay monitor prom-client
// starts at registration (a timer every 10 ms feeding a histogram that is never reset): 1.1 MB
// of the sidecar's RSS (three runs each way, side by side), and in kube-dns a second monitor
// next to its own kubedns_event_loop_delay_seconds, which a scrape reads instead. prom-client
// registers its default metrics all or none, so its per-metric modules are called one by one,
// in its order (test/process-metrics.test.ts checks that the set is prom-client's, less the lag).
// A subpath of its own (@kube-dns/config/process-metrics): the nanny, which imports the package's
// index, never loads prom-client.
//
// nodejs_gc_duration_seconds can be left out (`gcDuration: false`, kube-dns does): it is fed by a
// PerformanceObserver of 'gc' entries, and node reports every collection to it through a native
// immediate, a call into JavaScript and a setImmediate before the observer runs. At a DNS server's
// rate that is a dozen scavenges a second, each followed by that detour on the loop that answers
// the queries; it doubled kube-dns's p99 at a steady rate (docs/hot-path.md, "The GC observer").
import type { Registry } from 'prom-client';
import processCpuTotal from 'prom-client/lib/metrics/processCpuTotal.js';
import processStartTime from 'prom-client/lib/metrics/processStartTime.js';
import osMemoryHeap from 'prom-client/lib/metrics/osMemoryHeap.js';
import processOpenFileDescriptors from 'prom-client/lib/metrics/processOpenFileDescriptors.js';
import processMaxFileDescriptors from 'prom-client/lib/metrics/processMaxFileDescriptors.js';
import processResources from 'prom-client/lib/metrics/processResources.js';
import processHandles from 'prom-client/lib/metrics/processHandles.js';
import processRequests from 'prom-client/lib/metrics/processRequests.js';
import heapSizeAndUsed from 'prom-client/lib/metrics/heapSizeAndUsed.js';
import heapSpacesSizeAndUsed from 'prom-client/lib/metrics/heapSpacesSizeAndUsed.js';
import version from 'prom-client/lib/metrics/version.js';
import gc from 'prom-client/lib/metrics/gc.js';

const METRICS = [
  processCpuTotal,
  processStartTime,
  osMemoryHeap,
  processOpenFileDescriptors,
  processMaxFileDescriptors,
  // as prom-client does: only where node can list its active resources (every supported node)
  ...(typeof process.getActiveResourcesInfo === 'function' ? [processResources] : []),
  processHandles,
  processRequests,
  heapSizeAndUsed,
  heapSpacesSizeAndUsed,
  version,
  gc,
];

export interface ProcessMetricsOptions {
  /** nodejs_gc_duration_seconds, and the observer of every collection behind it (default true). */
  gcDuration?: boolean;
}

/** Registers prom-client's default metrics less nodejs_eventloop_lag_* (see above). */
export function collectProcessMetrics(register: Registry, opts: ProcessMetricsOptions = {}): void {
  for (const metric of METRICS) if (metric !== gc || opts.gcDuration !== false) metric(register, {});
}
