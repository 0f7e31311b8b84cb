// Malformed queries: counted, and answered (FORMERR, or NOTIMP for an opcode we do not serve)
// within a budget of replies per second; beyond it they are dropped. A reply costs a send, which
// is most of the work per packet, so a junk flood answered in full would starve the real clients
// sharing the socket, and it would be reflected at whatever address the junk claims to come from.
// A legitimate client never sends these, and would get the same nothing from a lost packet.

export class MalformedQueries {
  /** Answered with FORMERR or NOTIMP. */
  replied = 0;
  /** Dropped: no header to answer, or over the budget. */
  dropped = 0;
  private windowStart = -Infinity;
  private inWindow = 0;

  constructor(private readonly repliesPerSecond = 1000) {}

  /** Whether a malformed query arriving at `nowMs` (performance.now()) may be answered; counts it. */
  admit(nowMs: number, answerable: boolean): boolean {
    if (answerable && nowMs - this.windowStart >= 1000) {
      this.windowStart = nowMs;
      this.inWindow = 0;
    }
    if (answerable && this.inWindow < this.repliesPerSecond) {
      this.inWindow++;
      this.replied++;
      return true;
    }
    this.dropped++;
    return false;
  }
}
