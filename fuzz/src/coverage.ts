// Coverage feedback without native code: V8's precise block coverage through the inspector, in
// this very process. After each input we take the counters (which resets them) and turn every
// executed block of our own code into a feature "script:start:end:bucket", the count bucketed as
// libFuzzer does (1, 2, 3, 4-7, 8-15, 16-127, 128+), so a loop running more often is new too.
// An input that shows a feature never seen before joins the corpus.
import { Session } from 'node:inspector/promises';

interface Range {
  startOffset: number;
  endOffset: number;
  count: number;
}
interface ScriptCoverage {
  url: string;
  functions: { ranges: Range[] }[];
}

const bucket = (n: number): number => (n < 4 ? n : n < 8 ? 4 : n < 16 ? 8 : n < 128 ? 16 : 128);

export class Coverage {
  private readonly session = new Session();
  private readonly ids = new Map<string, number>();

  constructor(private readonly include: (url: string) => boolean) {}

  async start(): Promise<void> {
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: true });
    await this.take(); // forget what loading the modules ran
  }

  /** The features hit since the last call. */
  async take(): Promise<Set<string>> {
    const { result } = (await this.session.post('Profiler.takePreciseCoverage')) as { result: ScriptCoverage[] };
    const out = new Set<string>();
    for (const s of result) {
      if (!this.include(s.url)) continue;
      let id = this.ids.get(s.url);
      if (id === undefined) this.ids.set(s.url, (id = this.ids.size));
      for (const f of s.functions) for (const r of f.ranges) if (r.count > 0) out.add(`${id}:${r.startOffset}:${r.endOffset}:${bucket(r.count)}`);
    }
    return out;
  }

  async stop(): Promise<void> {
    await this.session.post('Profiler.stopPreciseCoverage');
    this.session.disconnect();
  }
}
