// Malformed queries: counted, and answered (FORMERR, or NOTIMP for an opcode we do not serve)
// within a budget of replies per second (server/reply-budget.ts); beyond it they are dropped, and
// so is a packet too short to carry an ID. A junk flood answered in full would starve the real
// clients sharing the socket, and it would be reflected at whatever address the junk claims to
// come from. A legitimate client never sends these, and would get the same nothing from a lost
// packet.
import { ReplyBudget } from './reply-budget.js';

export class MalformedQueries {
  private readonly budget: ReplyBudget;
  /** Dropped because they had no header to answer. */
  private unanswerable = 0;

  constructor(repliesPerSecond = 1000) {
    this.budget = new ReplyBudget(repliesPerSecond);
  }

  /** Answered with FORMERR or NOTIMP. */
  get replied(): number {
    return this.budget.replied;
  }

  /** Dropped: no header to answer, or over the budget. */
  get dropped(): number {
    return this.budget.dropped + this.unanswerable;
  }

  /** Whether a malformed query arriving at `nowMs` (performance.now()) may be answered; counts it. */
  admit(nowMs: number, answerable: boolean): boolean {
    if (answerable) return this.budget.take(nowMs);
    this.unanswerable++;
    return false;
  }
}
