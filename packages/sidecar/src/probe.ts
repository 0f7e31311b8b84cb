// One DNS probe and the loop that repeats it (kubernetes/dns pkg/sidecar): a real query over UDP, RD=1,
// class IN, no EDNS; a failed exchange or a reply without answer records is a failure
// (the rcode is not looked at, as in the original).
import { performance } from 'node:perf_hooks';
import { formatHostPort } from '@kube-dns/config';
import { query } from '@kube-dns/dns-client';
import type * as dnsPacket from 'dns-packet';
import type { ProbeOutcome } from './health.js';
import type { ProbeSpec } from './probe-spec.js';
import { sleep } from './sleep.js';

export const PROBE_TIMEOUT_MS = 2000;

/**
 * The clock of probe outcomes and of the health check's age rule: ms on the monotonic clock,
 * counted from when the process started on the epoch's scale. A step of the wall clock (a VM
 * resumed, NTP stepping at boot) would otherwise age the last success by the step: a day
 * forward turned a healthy probe 503 until the next one.
 */
export const monotonicNow = (): number => performance.timeOrigin + performance.now();

export async function runProbe(spec: Pick<ProbeSpec, 'server' | 'name' | 'type'>, timeoutMs = PROBE_TIMEOUT_MS): Promise<ProbeOutcome> {
  const started = performance.now();
  try {
    // dns-packet encodes ANY (255) although its type list omits it.
    const r = await query(spec.server, { name: spec.name, type: spec.type as dnsPacket.RecordType, class: 'IN', transport: 'udp', timeoutMs });
    const latencyMs = performance.now() - started;
    if ((r.packet.answers ?? []).length === 0) {
      return { ok: false, latencyMs: 0, error: `no RRs for domain ${JSON.stringify(spec.name)}`, at: monotonicNow() };
    }
    return { ok: true, latencyMs, at: monotonicNow() };
  } catch (e) {
    return { ok: false, latencyMs: 0, error: errorText(e, spec.server), at: monotonicNow() };
  }
}

function errorText(e: unknown, server: ProbeSpec['server']): string {
  if (!(e instanceof Error)) return String(e);
  // Node's text ("recvmsg ECONNREFUSED") does not say which server refused.
  if ((e as NodeJS.ErrnoException).code === 'ECONNREFUSED') return `udp ${formatHostPort(server.host, server.port)}: connection refused`;
  return e.message;
}

export interface ProberHooks {
  onOutcome(spec: ProbeSpec, outcome: ProbeOutcome): void;
  timeoutMs?: number;
  /** [0,1): the start offset within the first interval (tests pin it). */
  random?: () => number;
}

/** Probes `spec` every interval until stop(): a random start spreads probes of many pods. */
export class Prober {
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    readonly spec: ProbeSpec,
    private readonly hooks: ProberHooks,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop;
  }

  private async run(): Promise<void> {
    const { signal } = this.abort;
    const random = this.hooks.random ?? Math.random;
    await sleep(random() * this.spec.intervalMs, signal);
    while (!signal.aborted) {
      const started = performance.now();
      const outcome = await runProbe(this.spec, this.hooks.timeoutMs ?? PROBE_TIMEOUT_MS);
      if (signal.aborted) return;
      this.hooks.onOutcome(this.spec, outcome);
      await sleep(this.spec.intervalMs - (performance.now() - started), signal);
    }
  }
}
