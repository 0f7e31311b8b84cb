// At most one log line per interval for a repeated complaint: a flood of bad or excess input must
// show up in the log (with how many were suppressed) without the log becoming the flood.

export class LogLimiter {
  private last = -Infinity;
  private suppressed = 0;

  constructor(
    private readonly intervalMs: number,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Calls `emit` with the count suppressed since the last line, or counts this one as suppressed. */
  maybe(emit: (suppressed: number) => void): void {
    const t = this.now();
    if (t - this.last < this.intervalMs) {
      this.suppressed++;
      return;
    }
    this.last = t;
    const n = this.suppressed;
    this.suppressed = 0;
    emit(n);
  }
}
