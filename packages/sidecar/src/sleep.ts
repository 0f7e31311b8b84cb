// A sleep that stop() can cut short, so shutdown never waits for a probe interval.

/** setTimeout's longest delay: node clamps anything longer to 1 ms (a tight loop, not a long wait). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Sleeps `ms` (any length: in steps setTimeout takes), or until `signal` aborts. */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  let left = Math.max(0, ms);
  do {
    const step = Math.min(left, MAX_TIMER_MS);
    await sleepStep(step, signal);
    left -= step;
  } while (left > 0 && !signal.aborted);
}

function sleepStep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal.addEventListener('abort', done, { once: true });
  });
}
