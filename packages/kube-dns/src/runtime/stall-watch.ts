// Event-loop stalls over a threshold, each told apart by what it was made of: waiting for a CPU
// (the node's contention: neighbours, a CFS quota) or the process's own work (a long task, a
// collection). kubedns_event_loop_delay_seconds says how long the loop stalled and
// kubedns_event_loop_cpu_wait_seconds_total how long it waited for a CPU in all; neither says
// whether a given stall was one or the other, and on a busy node both happen in the same minute.
//
// A timer every PERIOD_MS notes how late it runs, and reads the main thread's run-queue wait from
// /proc/self/task/<pid>/schedstat (second field, ns: the time the thread was ready to run but
// not running) with one pread on a file opened once. A tick late by more than the threshold is
// one stall; it counts as `cpu_wait` when the thread waited for a CPU for at least half of it,
// else as `process`. Cost: one timer wake-up and one pread every 20 ms (about 5 µs), nothing on
// the query path. Not started where the kernel has no schedstat.
import { Buffer } from 'node:buffer';
import { closeSync, openSync, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const PERIOD_MS = 20;

export interface StallCounts {
  /** Stalls over the threshold with at least half of their length spent waiting for a CPU. */
  cpuWait: number;
  /** The others: the process's own work or its collector. */
  process: number;
}

export interface StallWatch {
  readonly counts: StallCounts;
  stop(): void;
}

/** The second number of a schedstat line (run-queue wait, ns), parsed from its bytes. */
export function schedstatWait(buf: Uint8Array, len: number): number {
  let i = 0;
  while (i < len && buf[i] !== 0x20) i++;
  i++;
  let v = 0;
  let digits = 0;
  for (; i < len; i++) {
    const c = buf[i]!;
    if (c < 0x30 || c > 0x39) break;
    v = v * 10 + (c - 0x30);
    digits++;
  }
  return digits > 0 ? v : NaN;
}

/** Starts watching; undefined where the main thread's schedstat cannot be read. The timer never keeps the process alive. */
export function watchStalls(thresholdMs = 5, file = `/proc/self/task/${process.pid}/schedstat`): StallWatch | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  const buf = Buffer.alloc(128);
  const waitMs = (): number => {
    try {
      return schedstatWait(buf, readSync(fd, buf, 0, buf.length, 0)) / 1e6;
    } catch {
      return NaN;
    }
  };
  if (Number.isNaN(waitMs())) {
    closeSync(fd);
    return undefined;
  }
  const counts: StallCounts = { cpuWait: 0, process: 0 };
  let last = performance.now();
  let lastWait = waitMs();
  const timer = setInterval(() => {
    const now = performance.now();
    const wait = waitMs();
    const late = now - last - PERIOD_MS;
    if (late > thresholdMs) {
      if (wait - lastWait >= late / 2) counts.cpuWait++;
      else counts.process++;
    }
    last = now;
    lastWait = wait;
  }, PERIOD_MS);
  timer.unref();
  return {
    counts,
    stop: () => {
      clearInterval(timer);
      try {
        closeSync(fd);
      } catch {
        /* closed already */
      }
    },
  };
}
