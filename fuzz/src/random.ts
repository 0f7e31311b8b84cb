// A seeded PRNG (mulberry32): a run is repeated exactly by giving its seed again.

export class Random {
  private s: number;

  constructor(readonly seed: number) {
    this.s = seed >>> 0;
  }

  /** Uniform in [0, 2^32). */
  u32(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform integer in [0, n). */
  below(n: number): number {
    return n <= 0 ? 0 : this.u32() % n;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.below(xs.length)]!;
  }

  chance(p: number): boolean {
    return this.u32() / 2 ** 32 < p;
  }
}
