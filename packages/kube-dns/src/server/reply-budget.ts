// A budget of replies per second for queries we would rather not answer in full: malformed
// packets (server/malformed.ts) and queries over the forward cap (forward/forwarder.ts). A reply
// costs a send, and on loopback a send is most of the work of a query (the kernel delivers it
// to the receiver in the sender's time: 40-55% of kube-dns's CPU under a flood of
// SERVFAILs, profiled); a flood answered in full would starve the well-behaved clients sharing
// the socket. Within the budget a query still gets its quick error; beyond it, nothing, as BIND
// drops fetches over its quotas and as a lost packet would.

/** What a step of the query path gives when the query is to get no reply at all. */
export const DROP: unique symbol = Symbol('drop');

/**
 * A token bucket: `perSecond` tokens a second, at most a tenth of a second's worth banked. Not
 * whole-second windows: a flood's first second would then get all its replies at once (1,000
 * sends in a burst, 20-50 ms in which nobody else is answered, measured at the start of the
 * bench's water torture); the bucket spreads them evenly.
 */
export class ReplyBudget {
  /** Queries the budget let through (answered). */
  replied = 0;
  /** Queries over the budget (dropped). */
  dropped = 0;
  /** Tokens the bucket holds when full: a tenth of a second's worth, at least one. */
  readonly burst: number;
  private tokens: number;
  private last = -Infinity;

  constructor(readonly perSecond: number) {
    this.burst = perSecond > 0 ? Math.max(1, Math.ceil(perSecond / 10)) : 0;
    this.tokens = this.burst;
  }

  /** Whether a query at `nowMs` (performance.now()) may be answered; counts it either way. */
  take(nowMs: number): boolean {
    if (nowMs > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((nowMs - this.last) * this.perSecond) / 1000);
      this.last = nowMs;
    }
    if (this.tokens >= 1) {
      this.tokens--;
      this.replied++;
      return true;
    }
    this.dropped++;
    return false;
  }
}
