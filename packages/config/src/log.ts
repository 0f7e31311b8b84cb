// Structured JSON logs (pino) on stderr, verbosity from the klog-style --v flag.
import { pino, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

/** --v 0-2: info, 3-5: debug, 6+: trace (klog's V(n) levels, coarsened). */
export function levelForVerbosity(v: number): 'info' | 'debug' | 'trace' {
  if (v >= 6) return 'trace';
  if (v >= 3) return 'debug';
  return 'info';
}

export function createLogger(name: string, verbosity = 2, level?: string): Logger {
  return pino(
    { name, level: level ?? process.env.LOG_LEVEL ?? levelForVerbosity(verbosity), base: { component: name } },
    pino.destination({ fd: 2, sync: true }),
  );
}

/** A logger that drops everything: for tests that do not look at logs. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
