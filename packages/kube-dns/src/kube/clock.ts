// Time as the reflectors see it: injectable so backoff schedules are tested without sleeping.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms`, or at once (without error) when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** Uniform in [0, 1): the jitter source. */
  random(): number;
}

export const realClock: Clock = {
  now: () => Date.now(),
  random: () => Math.random(),
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  },
};
