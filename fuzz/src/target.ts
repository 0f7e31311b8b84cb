// What a fuzz target provides: seeds, a dictionary, and a run that throws when an oracle fails.

export interface FuzzTarget {
  name: string;
  /** Which loaded scripts count for coverage (our own code under test). */
  covers(url: string): boolean;
  seeds(): Buffer[];
  dictionary: Buffer[];
  /** Throws (or rejects) with a clear message when the code under test misbehaves. */
  run(input: Buffer): void | Promise<void>;
}

export class OracleError extends Error {
  override name = 'OracleError';
}

export function check(cond: unknown, what: string): asserts cond {
  if (!cond) throw new OracleError(what);
}
