// Wiring: probes and the dnsmasq poller feed the metrics and the health state; HTTP serves them.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatHostPort, httpListenHost, limitHttpConnections, type Logger, silentLogger } from '@kube-dns/config';
import { DnsmasqPoller } from './dnsmasq-poller.js';
import { type HealthBody, type ProbeHealthState, type ProbeOutcome, evaluateHealth, initialHealth, recordOutcome } from './health.js';
import { createApp } from './http.js';
import { createMetrics, type SidecarMetrics } from './metrics.js';
import type { SidecarOptions } from './options.js';
import { PROBE_TIMEOUT_MS, Prober, monotonicNow } from './probe.js';
import type { ProbeSpec } from './probe-spec.js';

export interface SidecarRuntime {
  logger?: Logger;
  /** Per-probe DNS timeout (default 2 s, the original's). */
  probeTimeoutMs?: number;
  /** Start offset of each probe within its first interval, [0,1) (default random). */
  random?: () => number;
  /** Clock for the health staleness rule (default monotonicNow, probe.ts). */
  now?: () => number;
  /** Connections at once and idle time of the HTTP port (defaults: @kube-dns/config's http-limits). */
  http?: Parameters<typeof limitHttpConnections>[1];
}

export interface RunningSidecar {
  port: number;
  metrics: SidecarMetrics;
  health(label: string): HealthBody | undefined;
  stop(): Promise<void>;
}

export async function startSidecar(options: SidecarOptions, runtime: SidecarRuntime = {}): Promise<RunningSidecar> {
  const log = runtime.logger ?? silentLogger();
  const now = runtime.now ?? monotonicNow;
  const metrics = createMetrics(options.prometheusNamespace, options.probes.map((p) => p.label));
  const states = new Map<string, { spec: ProbeSpec; state: ProbeHealthState }>();
  for (const spec of options.probes) states.set(spec.label, { spec, state: initialHealth() });

  const health = (label: string): HealthBody | undefined => {
    const entry = states.get(label);
    if (!entry) return undefined;
    return evaluateHealth(entry.state, { threshold: options.probeFailureThreshold, intervalMs: entry.spec.intervalMs, timeoutMs: runtime.probeTimeoutMs ?? PROBE_TIMEOUT_MS }, now());
  };

  const onOutcome = (spec: ProbeSpec, outcome: ProbeOutcome) => {
    const entry = states.get(spec.label)!;
    const m = metrics.probes.get(spec.label)!;
    if (outcome.ok) m.latencyMs.observe(outcome.latencyMs);
    else m.errors.inc();
    const before = entry.state;
    entry.state = recordOutcome(before, outcome);
    if (!outcome.ok && before.consecutiveFailures === 0) log.warn({ probe: spec.label, err: outcome.error }, 'probe failed');
    else if (outcome.ok && before.consecutiveFailures > 0) log.info({ probe: spec.label, failures: before.consecutiveFailures }, 'probe succeeds again');
    else log.debug({ probe: spec.label, ok: outcome.ok, latencyMs: outcome.latencyMs, err: outcome.error }, 'probe');
  };

  const app = createApp({ metricsPath: options.prometheusPath, registry: metrics.registry, health });
  const server: Server = createServer(app);
  limitHttpConnections(server, runtime.http);
  // The original registers probes before listening and dies when it cannot listen.
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: options.prometheusPort, host: httpListenHost(options.prometheusAddr) }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (e) => log.error({ err: e.message }, 'HTTP server error'));
  const port = (server.address() as AddressInfo).port;

  const probers = options.probes.map((spec) => new Prober(spec, { onOutcome, timeoutMs: runtime.probeTimeoutMs, random: runtime.random }));
  const poller = new DnsmasqPoller({ host: options.dnsmasqAddr, port: options.dnsmasqPort }, options.dnsmasqPollIntervalMs, metrics, log);
  for (const p of probers) p.start();
  poller.start();
  log.info(
    {
      http: formatHostPort(options.prometheusAddr, port),
      dnsmasq: formatHostPort(options.dnsmasqAddr, options.dnsmasqPort),
      probes: options.probes.map((p) => `${p.label},${p.serverText},${p.name},${p.intervalMs / 1000},${p.type}`),
      probeFailureThreshold: options.probeFailureThreshold,
    },
    'sidecar started',
  );

  let stopping: Promise<void> | undefined;
  return {
    port,
    metrics,
    health,
    stop: () =>
      (stopping ??= (async () => {
        await Promise.all([...probers.map((p) => p.stop()), poller.stop()]);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })()),
  };
}
