// Structured JSON logs on stderr, one line per record, verbosity from the klog-style --v flag.
//
// The lines are pino's (the logger this project used first, and log pipelines may parse):
// {"level":30,"time":<ms>,"component":…,"name":…,<bindings>,<fields>,"msg":…}, levels 10 trace,
// 20 debug, 30 info, 40 warn, 50 error, 60 fatal, an Error under `err` as {type,message,stack}.
// It is written here rather than loaded because pino's transports bring node's worker_threads
// and its own machinery into every process at start (about 4 MiB of RSS in each of the pod's
// three, docs/footprint.md), for features none of them uses: they write synchronously to fd 2.
import { Buffer } from 'node:buffer';
import { writeSync } from 'node:fs';
import { format } from 'node:util';

export type LevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
const LEVELS: Record<LevelName, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** Where the lines go: fd 2 in the binaries, a function in the tests that read them. */
export type LogSink = (line: string) => void;

type LogFn = {
  (msg: string, ...args: unknown[]): void;
  (fields: object, msg?: string, ...args: unknown[]): void;
};

export interface Logger {
  readonly level: LevelName;
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  isLevelEnabled(level: LevelName): boolean;
  /** A logger whose every line also carries these fields (after the parent's). */
  child(bindings: Record<string, unknown>): Logger;
}

/** --v 0-2: info, 3-5: debug, 6+: trace (klog's V(n) levels, coarsened). */
export function levelForVerbosity(v: number): 'info' | 'debug' | 'trace' {
  if (v >= 6) return 'trace';
  if (v >= 3) return 'debug';
  return 'info';
}

function levelNamed(name: string): LevelName {
  if (name in LEVELS) return name as LevelName;
  throw new Error(`unknown log level ${JSON.stringify(name)}: one of ${Object.keys(LEVELS).join(', ')}`);
}

/** Writes a whole line to stderr even when it is a non-blocking pipe that is momentarily full. */
export function stderrSink(fd = 2): LogSink {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return (line) => {
    let buf = Buffer.from(line);
    for (let tries = 0; buf.length > 0; ) {
      try {
        buf = buf.subarray(writeSync(fd, buf));
      } catch (e) {
        // EAGAIN: the reader is behind; wait a little (at most ~1 s in all) rather than drop
        // the line. Any other error (the reader is gone): nothing useful can be done with it.
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN' || ++tries > 100) return;
        Atomics.wait(pause, 0, 0, 10);
      }
    }
  };
}

/**
 * Errors become {type, message, stack} (JSON.stringify would give {}), bigints strings; with
 * `seen`, an object met again is written '[Circular]' (only used once a plain pass has thrown:
 * it would also mark an object that is merely referenced twice).
 */
function replacer(seen?: WeakSet<object>): (this: unknown, key: string, value: unknown) => unknown {
  return function (_key, value) {
    if (typeof value === 'bigint') return value.toString();
    if (value === null || typeof value !== 'object') return value;
    if (seen) {
      if (seen.has(value)) return '[Circular]';
      seen.add(value);
    }
    if (value instanceof Error) {
      const { name, message, stack, ...rest } = value;
      const out: Record<string, unknown> = { type: value.constructor?.name ?? name, message, stack, ...rest };
      if (value.cause !== undefined) out.cause = value.cause;
      return out;
    }
    return value;
  };
}

class JsonLogger implements Logger {
  readonly trace: LogFn;
  readonly debug: LogFn;
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
  readonly fatal: LogFn;
  private readonly threshold: number;

  /** `prefix`: the serialized bindings, `,"component":…` — made once, not per line. */
  constructor(
    readonly level: LevelName,
    private readonly prefix: string,
    private readonly sink: LogSink,
  ) {
    this.threshold = LEVELS[level];
    const at = (n: number): LogFn => (n < this.threshold ? noop : (a: unknown, ...rest: unknown[]) => this.write(n, a, rest));
    this.trace = at(10);
    this.debug = at(20);
    this.info = at(30);
    this.warn = at(40);
    this.error = at(50);
    this.fatal = at(60);
  }

  isLevelEnabled(level: LevelName): boolean {
    return LEVELS[level] >= this.threshold && level !== 'silent';
  }

  child(bindings: Record<string, unknown>): Logger {
    return new JsonLogger(this.level, this.prefix + fieldsOf(bindings), this.sink);
  }

  private write(n: number, first: unknown, rest: unknown[]): void {
    let fields = '';
    let msg: unknown;
    if (typeof first === 'string') {
      msg = rest.length > 0 ? format(first, ...rest) : first;
    } else if (first instanceof Error) {
      fields = fieldsOf({ err: first });
      msg = typeof rest[0] === 'string' ? format(...(rest as [string])) : first.message;
    } else if (first !== null && typeof first === 'object') {
      const { msg: inner, ...others } = first as Record<string, unknown>;
      fields = fieldsOf(others);
      msg = typeof rest[0] === 'string' ? format(...(rest as [string])) : inner;
    } else {
      msg = first === undefined ? undefined : String(first);
    }
    const tail = msg === undefined ? '' : `,"msg":${JSON.stringify(String(msg))}`;
    this.sink(`{"level":${n},"time":${Date.now()}${this.prefix}${fields}${tail}}\n`);
  }
}

function noop(): void {}

/** `,"k":v,…` for an object's own enumerable fields (none: ''). */
function fieldsOf(o: Record<string, unknown>): string {
  let json: string;
  try {
    json = JSON.stringify(o, replacer());
  } catch {
    json = JSON.stringify(o, replacer(new WeakSet()));
  }
  return json.length > 2 ? `,${json.slice(1, -1)}` : '';
}

/**
 * `level` (tests) or the LOG_LEVEL environment variable, else the verbosity's level. A LOG_LEVEL
 * that names no level is said in one warning line and the verbosity's level used: a log setting
 * must not keep a DNS container from starting (it used to end it with a stack trace).
 */
export function createLogger(name: string, verbosity = 2, level?: string, sink: LogSink = stderrSink()): Logger {
  const fromEnv = level === undefined ? process.env.LOG_LEVEL : undefined;
  const badEnv = fromEnv !== undefined && !(fromEnv in LEVELS);
  const lvl = levelNamed(level ?? (badEnv ? undefined : fromEnv) ?? levelForVerbosity(verbosity));
  const log = new JsonLogger(lvl, fieldsOf({ component: name, name }), sink);
  if (badEnv) log.warn({ LOG_LEVEL: fromEnv, levels: Object.keys(LEVELS) }, `LOG_LEVEL names no log level: ignored, --v's level (${lvl}) is used`);
  return log;
}

/** A logger that drops everything: for tests that do not look at logs. */
export function silentLogger(): Logger {
  return new JsonLogger('silent', '', noop);
}

/**
 * Node's process warnings as log lines of `log`, instead of its plain-text lines on stderr (a
 * JSON log pipeline stops at those). Deprecations go to debug: they are for whoever maintains
 * the code (on Node 22 and later a bundled dependency's `url.parse()` is one, at every start),
 * not for the operator; any other warning (MaxListenersExceeded, an experimental feature) to warn.
 */
export function logProcessWarnings(log: Logger): void {
  process.removeAllListeners('warning'); // node's own printer
  process.on('warning', (w: Error & { code?: string }) => {
    const fields = { warning: w.name, ...(w.code !== undefined && { code: w.code }) };
    if (w.name === 'DeprecationWarning') log.debug(fields, w.message);
    else log.warn(fields, w.message);
  });
}
