// A budget of replies per second for queries we would rather not answer in full: malformed
// packets (server/malformed.ts) and queries over the forward cap (forward/forwarder.ts). A reply
// costs a send, and on loopback a send is most of the work of a query (the kernel delivers it
// to the receiver in the sender's time: 40-55% of kube-dns's CPU under a flood of
// SERVFAILs, profiled); a flood answered in full would starve the well-behaved clients sharing
// the socket. Within the budget a query still gets its quick error; beyond it, nothing, as BIND
// drops fetches over its quotas and as a lost packet would.

/** What a step of the query path gives when the query is to get no reply at all. */
export const DROP: unique symbol = Symbol('drop');

export class ReplyBudget {
  /** Queries the budget let through (answered). */
  replied = 0;
  /** Queries over the budget (dropped). */
  dropped = 0;
  private windowStart = -Infinity;
  private inWindow = 0;

  constructor(readonly perSecond: number) {}

  /** Whether a query at `nowMs` (performance.now()) may be answered; counts it either way. */
  take(nowMs: number): boolean {
    if (nowMs - this.windowStart >= 1000) {
      this.windowStart = nowMs;
      this.inWindow = 0;
    }
    if (this.inWindow < this.perSecond) {
      this.inWindow++;
      this.replied++;
      return true;
    }
    this.dropped++;
    return false;
  }
}
