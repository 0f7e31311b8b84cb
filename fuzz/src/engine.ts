// The fuzzing loop for one target: run the corpus, then mutate inputs picked from it for the time
// given; an input that reaches code (or loop counts) not reached before joins the corpus. A
// failing oracle, an exception or a hang stops the target and reports the input.
import { createHash } from 'node:crypto';
import { Coverage } from './coverage.js';
import { mutate } from './mutate.js';
import { Random } from './random.js';
import type { FuzzTarget } from './target.js';

export interface FuzzResult {
  target: string;
  execs: number;
  seconds: number;
  corpus: number;
  features: number;
  /** Inputs found this run that reached new coverage. */
  added: Buffer[];
  failure?: { input: Buffer; message: string };
}

export const inputId = (b: Buffer): string => createHash('sha1').update(b).digest('hex').slice(0, 16);

const HANG_MS = 2000;

async function runGuarded(target: FuzzTarget, input: Buffer): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const hang = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no result after ${HANG_MS} ms (a hang)`)), HANG_MS);
    });
    await Promise.race([Promise.resolve().then(() => target.run(input)), hang]);
    return undefined;
  } catch (e) {
    return e instanceof Error ? (e.name === 'OracleError' ? e.message : (e.stack ?? e.message)) : String(e);
  } finally {
    clearTimeout(timer);
  }
}

export async function fuzz(target: FuzzTarget, o: { seconds: number; seed: number; corpus: Buffer[] }): Promise<FuzzResult> {
  const rnd = new Random(o.seed);
  const coverage = new Coverage(target.covers);
  await coverage.start();
  const seen = new Set<string>();
  const corpus: Buffer[] = [];
  const added: Buffer[] = [];
  const started = Date.now();
  let execs = 0;
  const result = (failure?: FuzzResult['failure']): FuzzResult => ({
    target: target.name,
    execs,
    seconds: (Date.now() - started) / 1000,
    corpus: corpus.length,
    features: seen.size,
    added,
    ...(failure && { failure }),
  });
  /** Runs one input; true when it showed new coverage. */
  const one = async (input: Buffer): Promise<{ fresh: boolean; failure?: string }> => {
    execs++;
    const failure = await runGuarded(target, input);
    let fresh = false;
    for (const f of await coverage.take()) {
      if (!seen.has(f)) {
        seen.add(f);
        fresh = true;
      }
    }
    return failure === undefined ? { fresh } : { fresh, failure };
  };
  try {
    for (const input of [...target.seeds(), ...o.corpus]) {
      const r = await one(input);
      if (r.failure !== undefined) return result({ input, message: r.failure });
      if (r.fresh || corpus.length === 0) corpus.push(input);
    }
    const deadline = started + o.seconds * 1000;
    while (Date.now() < deadline) {
      // favour recent finds a little: they sit at the frontier of what is covered
      const parent = rnd.chance(0.3) ? corpus[corpus.length - 1 - rnd.below(Math.min(8, corpus.length))]! : rnd.pick(corpus);
      const child = mutate(parent, rnd, corpus, target.dictionary);
      const r = await one(child);
      if (r.failure !== undefined) return result({ input: child, message: r.failure });
      if (r.fresh) {
        corpus.push(child);
        added.push(child);
      }
    }
    return result();
  } finally {
    await coverage.stop();
  }
}
