// Gives back the heap a burst of traffic grew, once the process is quiet again: first the young
// generation, then the old space.
//
// The young generation. Under a flood V8 grows the new space up to twice --max-semi-space-size
// (4 MiB with the manifest's 2, 16 with 8, 32 with node's default) and keeps it. It shrinks the
// new space only at the end of a scavenge that finds the allocation rate low. A quiet server
// allocates so little that its next scavenge may be minutes away. V8's memory reducer does not
// help either: it starts after a full collection, and a flood of short-lived garbage causes none.
// So after a flood RSS stayed about 15 MB above idle for as long as we watched (40 s and more).
// So every 2 s: when the event loop was less than a quarter busy over the last period (a flood is
// over; a replica with steady light traffic counts as quiet too: at 200 qps it is 6-9% busy) and
// the new space is grown, one minor collection (a scavenge of what little is young: 0.2-5 ms
// measured) gives V8 the chance to apply its own rule. V8 judges the allocation rate over its last
// 5 s, so the flood still counts at the first quiet ticks; the space goes back to 1 MiB at about
// the third, some 6 s after the flood. When traffic keeps the rate above V8's threshold, V8 keeps
// the space and a forced scavenge is wasted: after five in a row (10 s, twice V8's window) the
// attempts back off, doubling up to one a minute. Under load nothing happens: the loop is busy,
// and V8 scavenges on its own.
//
// The old space. A flood also promotes what is in flight at each scavenge (packets being read,
// replies being sent) to the old space: a junk flood grew it from 10.5 to 17 MB, and with no full
// collection due (the old space was far from V8's limit) it stayed there, RSS 12-14% above its
// figure before the flood. So once the young generation is settled and the loop idle, when the
// old space has grown 4 MiB over the least it was since the last full collection we caused, one
// full collection, compacting (a plain one freed the garbage but kept the half-empty pages: 17 →
// 13.5 MB for 9.3 live; compacting, 17 → 10). It is atomic: 17-24 ms measured with 2,000
// Services, once after a flood, so at most one every 10 s, and only while the old space holds
// less than maxFullGcBytes (a large zone's pause would be longer, and the remnant a smaller share
// of its RSS). Live growth (a zone that grew) costs one collection per 4 MiB: the least it was
// starts again from the collection's result. Under steady traffic nothing happens (a 3-minute run
// at 2,000 qps: none; the young generation stays grown, or the loop busy).
// A pause that long is only for a loop that is idle, not merely "quiet": under idleUtilization
// (10%) over the period, and still under it through confirmMs (250 ms) watched right before. The
// period's figure is up to 2 s old: traffic that came back after a quiet spell was paused by it
// (found 2026-11-26: an 18 ms collection 0.26 s into a run at 13,335 qps, the loop 21% busy,
// after 10 s of silence; the bench's fixed-rate runs take turns with the ceiling's just so).
//
// collectNow() runs the same collection at once, whatever the heap's size: main.ts calls it when
// the initial sync completes, in the tick that makes /readiness say ready, so no query waits on
// it. The list's garbage went with it: old space 13.7 MiB at ready instead of 16.7 at 10,000
// Services (13.0 at rest either way), RSS 1 s after ready 75-77 MB instead of 79-81, 124 instead
// of 132 at 100,000; the pause 19 ms at 10,000, 79 ms at 100,000.
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from '@kube-dns/config';

export interface HeapSettlerOptions {
  /** How often to look, ms. */
  everyMs?: number;
  /** Event-loop utilization over the last period below which the process counts as quiet. */
  quietUtilization?: number;
  /** New space (both semi-spaces) above which it counts as grown, bytes (default 1 MiB, see below). */
  grownBytes?: number;
  /** Old space grown this much over its least since the last full collection: collect, bytes. */
  oldGrownBytes?: number;
  /** No forced full collection while the old space holds more than this, bytes. */
  maxFullGcBytes?: number;
  /** At most one forced full collection this often, ms. */
  fullGcEveryMs?: number;
  /** Event-loop utilization below which the loop counts as idle, for a full collection (an atomic pause). */
  idleUtilization?: number;
  /** How long the loop is watched, right before a full collection, to be still idle, ms. */
  confirmMs?: number;
  /** The heap's sizes and V8's collector (tests give their own). */
  heap?: HeapAccess;
  log?: Logger;
}

export interface HeapSizes {
  newSize: number;
  oldSize: number;
  oldUsed: number;
}

export interface HeapAccess {
  spaces(): HeapSizes;
  gc: Gc;
  /** Whether the next gc() compacts (V8's --compact-on-every-full-gc). */
  setCompacting(on: boolean): void;
}

/** V8's gc(): a full collection without arguments, a scavenge with { type: 'minor' }. */
export type Gc = (opts?: { type: 'minor' }) => void;

/** V8's gc(), without --expose-gc on the command line (Node refuses that flag in NODE_OPTIONS). */
function exposeGc(): Gc {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as Gc;
}

function spaces(): HeapSizes {
  let newSize = 0;
  let oldSize = 0;
  let oldUsed = 0;
  for (const s of getHeapSpaceStatistics()) {
    if (s.space_name === 'new_space') newSize = s.space_size;
    else if (s.space_name === 'old_space') {
      oldSize = s.space_size;
      oldUsed = s.space_used_size;
    }
  }
  return { newSize, oldSize, oldUsed };
}

export interface HeapSettler {
  /** One compacting full collection now, whatever the heap's size (see main.ts: after the initial sync, before any reply says ready). */
  collectNow(): void;
  stop(): void;
}

/** Starts watching. The timer never keeps the process alive. */
export function settleHeap(opts: HeapSettlerOptions = {}): HeapSettler {
  const everyMs = opts.everyMs ?? 2000;
  const quiet = opts.quietUtilization ?? 0.25;
  // The new space a node process starts with and V8 shrinks it back to: 1 MiB. Not 4 MiB, as at
  // first: that is all the manifest's 2 MB semi-spaces can grow to, so the settler never fired
  // with them (found on 2026-11-25, after the semi-spaces went from 8 to 2). Not the size when the
  // settler starts either: the initial sync has grown it by then.
  const grown = opts.grownBytes ?? 1024 * 1024;
  const oldGrown = opts.oldGrownBytes ?? 4 * 1024 * 1024;
  const maxFull = opts.maxFullGcBytes ?? 64 * 1024 * 1024;
  const fullEvery = opts.fullGcEveryMs ?? 10_000;
  const idle = opts.idleUtilization ?? 0.1;
  const confirmMs = opts.confirmMs ?? 250;
  const heap: HeapAccess = opts.heap ?? { spaces, gc: exposeGc(), setCompacting: (on) => setFlagsFromString(on ? '--compact-on-every-full-gc' : '--no-compact-on-every-full-gc') };
  const gc = heap.gc;
  let lastFull = -Infinity;
  let confirming: NodeJS.Timeout | undefined;
  let last = performance.eventLoopUtilization();
  let failures = 0;
  let skip = 0;
  let oldLeast = Infinity;
  /** One full collection that also compacts: V8 otherwise compacts only the pages it finds fragmented enough. */
  const collect = (): { oldSize: number; ms: number } => {
    const t0 = performance.now();
    // a V8 flag read at each full collection, on for this one only (V8's own stay as they were)
    heap.setCompacting(true);
    try {
      gc();
    } finally {
      heap.setCompacting(false);
    }
    lastFull = performance.now();
    const { oldSize } = heap.spaces();
    oldLeast = oldSize;
    return { oldSize, ms: +(lastFull - t0).toFixed(1) };
  };
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const before = heap.spaces();
    oldLeast = Math.min(oldLeast, before.oldSize);
    if (before.newSize <= grown) {
      failures = 0;
      skip = 0;
      if (!confirming && busy < idle && before.oldSize > oldLeast + oldGrown && before.oldUsed <= maxFull && performance.now() - lastFull >= fullEvery) {
        const from = performance.eventLoopUtilization();
        confirming = setTimeout(() => {
          confirming = undefined;
          // collectNow() may have run meanwhile (the initial sync completing): never two back to back
          if (performance.now() - lastFull < fullEvery) return;
          const recent = performance.eventLoopUtilization(performance.eventLoopUtilization(), from).utilization;
          if (recent >= idle) {
            opts.log?.debug({ oldSpaceBytes: before.oldSize, busy: recent }, 'old space collection put off: traffic came back');
            return;
          }
          const after = collect();
          opts.log?.debug({ oldSpaceBytes: before.oldSize, after: after.oldSize, ms: after.ms, busy, recent }, 'idle: old space collected');
        }, confirmMs);
        confirming.unref();
      }
      return;
    }
    if (skip > 0) {
      skip--;
      return;
    }
    if (busy >= quiet) return;
    gc({ type: 'minor' });
    const after = heap.spaces().newSize;
    if (after < before.newSize) failures = 0;
    else if (++failures >= 5) skip = Math.min(2 ** (failures - 5), 30);
    opts.log?.debug({ newSpaceBytes: before.newSize, after, busy }, 'quiet: young generation collected');
  }, everyMs);
  timer.unref();
  return {
    collectNow: () => {
      const before = heap.spaces().oldSize;
      const after = collect();
      opts.log?.debug({ oldSpaceBytes: before, after: after.oldSize, ms: after.ms }, 'old space collected');
    },
    stop: () => {
      clearInterval(timer);
      clearTimeout(confirming);
    },
  };
}
