// Exponential backoff with jitter for list/watch retries. A fleet of kube-dns replicas that lost
// the API server together must not come back in lock-step, and must not hammer it while it is down.

export interface BackoffOptions {
  /** First delay. Default 200 ms. */
  initialMs: number;
  /** Ceiling of the delay. Default 30 s. */
  maxMs: number;
  /** Growth per attempt. Default 2. */
  factor: number;
  /** Each delay is shortened by up to this fraction, at random. Default 0.2. */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { initialMs: 200, maxMs: 30_000, factor: 2, jitter: 0.2 };

export class Backoff {
  private attempt = 0;
  private readonly opts: BackoffOptions;

  constructor(
    opts: Partial<BackoffOptions> = {},
    private readonly random: () => number = Math.random,
  ) {
    this.opts = { ...DEFAULT_BACKOFF, ...opts };
  }

  /** The delay before the next retry; each call counts one more failure. */
  next(): number {
    const { initialMs, maxMs, factor, jitter } = this.opts;
    const base = Math.min(maxMs, initialMs * factor ** this.attempt);
    // Stop growing the exponent once capped, so it never overflows to Infinity.
    if (base < maxMs) this.attempt++;
    return Math.round(base * (1 - jitter * this.random()));
  }

  /** After a success: the next failure waits `initialMs` again. */
  reset(): void {
    this.attempt = 0;
  }

  get failures(): number {
    return this.attempt;
  }
}
