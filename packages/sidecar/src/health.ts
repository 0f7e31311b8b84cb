// Probe results → the /healthcheck/<label> answer. Pure: the clock is a parameter.
//
// The original answered from the last probe alone, so one lost UDP packet failed a liveness
// check. Here a probe that has worked stays healthy until `threshold` consecutive probes fail or
// no probe has succeeded for STALE_INTERVALS rounds and a timeout. A round is the interval, or
// the probe's timeout when that is longer: a probe starts an interval after the last one started,
// or as soon as it ends when it took longer (probe.ts), and a lost one takes the whole timeout.
// So two lost probes in a row never turn it 503 by age alone (interval 1 s, timeout 2 s: the next
// success comes 5 s after the last, within 3 x 2 + 2 s); the age rule is for a prober that stopped.
// Before the first success the answer is 503, as in the original (the kubelet's
// initialDelaySeconds covers start-up).

export const STALE_INTERVALS = 3;

export interface ProbeOutcome {
  ok: boolean;
  latencyMs: number;
  /** Set when !ok. */
  error?: string;
  /** Completion time, ms on the monotonic clock (probe.ts, monotonicNow). */
  at: number;
}

export interface ProbeHealthState {
  consecutiveFailures: number;
  lastSuccessAt?: number;
  lastSuccessLatencyMs: number;
  lastError?: string;
}

/** The original's JSON body, field names and order included. */
export interface HealthBody {
  IsOk: boolean;
  LatencySeconds: number;
  Err: string;
}

export const initialHealth = (): ProbeHealthState => ({ consecutiveFailures: 0, lastSuccessLatencyMs: 0 });

export function recordOutcome(state: ProbeHealthState, outcome: ProbeOutcome): ProbeHealthState {
  if (outcome.ok) return { consecutiveFailures: 0, lastSuccessAt: outcome.at, lastSuccessLatencyMs: outcome.latencyMs };
  return { ...state, consecutiveFailures: state.consecutiveFailures + 1, lastError: outcome.error ?? 'probe failed' };
}

export function evaluateHealth(state: ProbeHealthState, policy: { threshold: number; intervalMs: number; timeoutMs: number }, now: number): HealthBody {
  const failed = (err: string): HealthBody => ({ IsOk: false, LatencySeconds: 0, Err: err });
  const last = state.lastError ?? '';
  if (state.lastSuccessAt === undefined) return failed(state.lastError ?? 'waiting for first probe');
  if (state.consecutiveFailures >= policy.threshold) {
    return failed(`the last ${state.consecutiveFailures} probes failed (threshold ${policy.threshold}); last error: ${last}`);
  }
  const sinceMs = now - state.lastSuccessAt;
  const round = Math.max(policy.intervalMs, policy.timeoutMs);
  if (sinceMs > STALE_INTERVALS * round + policy.timeoutMs) {
    const tail = state.consecutiveFailures > 0 ? `; last error: ${last}` : '';
    return failed(
      `no successful probe for ${seconds(sinceMs)} (more than ${STALE_INTERVALS} rounds of ${seconds(round)} and a timeout of ${seconds(policy.timeoutMs)})${tail}`,
    );
  }
  return { IsOk: true, LatencySeconds: state.lastSuccessLatencyMs / 1000, Err: '' };
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))}s`;

/** JSON as Go's encoding/json writes it: <, > and & escaped (the original's bodies show `\u003e`). */
export function healthJson(body: HealthBody): string {
  return JSON.stringify({ IsOk: body.IsOk, LatencySeconds: body.LatencySeconds, Err: body.Err })
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026');
}
