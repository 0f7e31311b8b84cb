// Gives back the young generation a burst of traffic grew, once the process is quiet again.
//
// Under a flood V8 grows the new space up to twice --max-semi-space-size (4 MiB with the
// manifest's 2, 16 with 8, 32 with node's default) and keeps it. It shrinks the new space only at the end of a scavenge that finds
// the allocation rate low. A quiet server allocates so little that its next scavenge may be minutes
// away. V8's memory reducer does not help either: it starts after a full collection, and a flood
// of short-lived garbage causes none. So after a flood RSS stayed about 15 MB above idle for as long
// as we watched (40 s and more).
//
// So every 2 s: when the event loop was less than a quarter busy over the last period (a flood is
// over; a replica with steady light traffic counts as quiet too: at 200 qps it is 6-9% busy) and
// the new space is grown, one minor collection (a scavenge of what little is young: 0.2-5 ms
// measured) gives V8 the chance to apply its own rule. V8 judges the allocation rate over its last
// 5 s, so the flood still counts at the first quiet ticks; the space goes back to 1 MiB at about
// the third, some 6 s after the flood. When traffic keeps the rate above V8's threshold, V8 keeps
// the space and a forced scavenge is wasted: after five in a row (10 s, twice V8's window) the
// attempts back off, doubling up to one a minute. Under load nothing happens: the loop is busy, and V8 scavenges on its own.
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from '@kube-dns/config';

export interface YoungGenerationOptions {
  /** How often to look, ms. */
  everyMs?: number;
  /** Event-loop utilization over the last period below which the process counts as quiet. */
  quietUtilization?: number;
  /** New space (both semi-spaces) above which it counts as grown, bytes (default 1 MiB, see below). */
  grownBytes?: number;
  log?: Logger;
}

type Gc = (opts: { type: 'minor' }) => void;

/** V8's gc(), without --expose-gc on the command line (Node refuses that flag in NODE_OPTIONS). */
function exposeGc(): Gc {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Gc;
}

const newSpaceBytes = (): number => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;

/** Starts watching; returns the function that stops it. The timer never keeps the process alive. */
export function settleYoungGeneration(opts: YoungGenerationOptions = {}): () => void {
  const everyMs = opts.everyMs ?? 2000;
  const quiet = opts.quietUtilization ?? 0.25;
  // The new space a node process starts with and V8 shrinks it back to: 1 MiB. Not 4 MiB, as at
  // first: that is all the manifest's 2 MB semi-spaces can grow to, so the settler never fired
  // with them (found on 2026-11-25, after the semi-spaces went from 8 to 2). Not the size when the
  // settler starts either: the initial sync has grown it by then.
  const grown = opts.grownBytes ?? 1024 * 1024;
  const gc = exposeGc();
  let last = performance.eventLoopUtilization();
  let failures = 0;
  let skip = 0;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const before = newSpaceBytes();
    if (before <= grown) {
      failures = 0;
      skip = 0;
      return;
    }
    if (skip > 0) {
      skip--;
      return;
    }
    if (busy >= quiet) return;
    gc({ type: 'minor' });
    const after = newSpaceBytes();
    if (after < before) failures = 0;
    else if (++failures >= 5) skip = Math.min(2 ** (failures - 5), 30);
    opts.log?.debug({ newSpaceBytes: before, after, busy }, 'quiet: young generation collected');
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
