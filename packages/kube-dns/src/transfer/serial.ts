// The SOA serial while zone transfer is on: it must grow with every change, or a secondary would
// keep its old copy. The serial is the Unix time (seconds) of the first look after a change, and
// at least one more than the last: replicas that saw the same changes give close serials, and a
// restart does not go back (unless changes outran the clock by more than the downtime).
import type { ZoneReader } from '../records/types.js';

export class SerialClock {
  private gen: number;
  private serial: number;

  constructor(
    private readonly zone: ZoneReader,
    private readonly now: () => number = Date.now,
  ) {
    this.gen = zone.generation;
    this.serial = Math.floor(now() / 1000);
  }

  /** The serial for the zone as it is now. */
  current(): number {
    const g = this.zone.generation;
    if (g !== this.gen) {
      this.gen = g;
      // serials are 32-bit and compared with RFC 1982 arithmetic: wrapping past 2^32 is fine
      this.serial = Math.max(this.serial + 1, Math.floor(this.now() / 1000)) >>> 0;
    }
    return this.serial;
  }
}
