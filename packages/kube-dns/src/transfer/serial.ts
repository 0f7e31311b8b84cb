// The SOA serial while zone transfer is on: it must grow with every change, or a secondary would
// keep its old copy; and it must not run ahead of the clock, or after a restart (which starts
// from the clock) it would go back and secondaries would keep their copy for as long as the old
// serial had run ahead. So it is the Unix time (seconds) of a change, and it moves at most once
// per minIntervalMs (a second, more when transfers are expensive: transfer.ts): changes within
// that interval wait for the next serial, so it gains at most one a second, as the clock does.
// Replicas that saw the same changes give close serials. It follows the zone's content (a pod's
// change, in no transfer, does not count); a move is itself a change of every answer that
// carries the SOA: the zone's generation is bumped with it, so cached ones go.
import { performance } from 'node:perf_hooks';
import type { ZoneReader } from '../records/types.js';

export class SerialClock {
  private gen: number;
  private serial: number;
  /** performance.now() when the serial last moved: the pace is kept on the monotonic clock. */
  private movedAt: number;
  /** The least time between two serials. */
  minIntervalMs = 1000;

  constructor(
    private readonly zone: ZoneReader & { readonly contentGeneration?: number; bumpGeneration?(): void },
    private readonly now: () => number = Date.now,
    private readonly monotonic: () => number = () => performance.now(),
  ) {
    this.gen = this.content();
    this.serial = Math.floor(now() / 1000);
    this.movedAt = monotonic();
  }

  private content(): number {
    return this.zone.contentGeneration ?? this.zone.generation;
  }

  /** The serial for the zone as it is now (a change newer than minIntervalMs may wait for the next). */
  current(): number {
    const g = this.content();
    if (g !== this.gen && this.monotonic() - this.movedAt >= this.minIntervalMs) {
      this.gen = g;
      // serials are 32-bit and compared with RFC 1982 arithmetic: wrapping past 2^32 is fine
      this.serial = Math.max(this.serial + 1, Math.floor(this.now() / 1000)) >>> 0;
      this.movedAt = this.monotonic();
      this.zone.bumpGeneration?.();
      this.gen = this.content(); // the bump is not a change of its own
    }
    return this.serial;
  }
}
