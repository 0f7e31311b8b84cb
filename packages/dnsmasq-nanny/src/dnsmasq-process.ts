// One dnsmasq process: spawned with execa, its output relayed line by line into our log, its
// exit reported, and a notion of "ready" for signals.
//
// dnsmasq ignores SIGHUP until its start-up is complete (its handler drops every signal but
// TERM while `pid == 0`), so a reload requested before then must be held back and sent later.
// "started, version" is logged just before that point; we add a short margin, and fall back to
// a timer when its log does not reach us.
//
// dnsmasq forks a child per TCP connection (living up to 150 s), which inherits its stdout,
// stderr and listening sockets, and which dnsmasq cannot clean up when it is SIGKILLed. So:
//   - its exit is taken from the process's 'exit' event, not from execa's result, which also
//     waits for the pipes to close (one idle TCP client hid a crash for minutes);
//   - it runs as the leader of its own process group (detached), and the whole group is killed
//     when it exits and when it must be killed, so a leftover child neither holds the port the
//     restart binds nor outlives the nanny.
import type { Readable } from 'node:stream';
import { execa, type ResultPromise } from 'execa';
import type { Logger } from '@kube-dns/config';

/** A line longer than this is passed on in pieces of this size (dnsmasq's lines are short). */
const MAX_LINE = 16 * 1024;

/**
 * Calls onLine for each line of a text stream (\n or \r\n), then onEnd. Not node:readline,
 * which the nanny would load for this alone (docs/footprint.md).
 */
export function eachLine(stream: Readable, onLine: (line: string) => void, onEnd: () => void): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    rest += chunk;
    let start = 0;
    for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n', start)) {
      onLine(rest.slice(start, nl > start && rest.charCodeAt(nl - 1) === 13 ? nl - 1 : nl));
      start = nl + 1;
    }
    rest = rest.slice(start);
    while (rest.length > MAX_LINE) {
      onLine(rest.slice(0, MAX_LINE));
      rest = rest.slice(MAX_LINE);
    }
  });
  stream.once('end', () => {
    if (rest !== '') onLine(rest.endsWith('\r') ? rest.slice(0, -1) : rest);
    rest = '';
    onEnd();
  });
}

export interface ExitInfo {
  /** Exit status, when it exited by itself. */
  code?: number;
  /** Signal name, when a signal ended it. */
  signal?: string;
  /** Why it could not run at all (e.g. the executable is missing). */
  spawnError?: string;
  /** Its last output lines, for the error message. */
  lastLines: string[];
  /** How long it ran. */
  uptimeMs: number;
}

/** "exited with status 1", "was killed by SIGKILL"; with `withOutput`, its last lines too. */
export function describeExit(e: ExitInfo, withOutput = true): string {
  const how = e.spawnError ? `could not be started: ${e.spawnError}` : e.signal ? `was killed by ${e.signal}` : `exited with status ${e.code}`;
  return withOutput && e.lastLines.length ? `${how}; last output: ${e.lastLines.join(' | ')}` : how;
}

export interface DnsmasqProcessOptions {
  exec: string;
  args: readonly string[];
  log: Logger;
  /** Ready this long after the "started" line (the handler is installed right after it). */
  readyMarginMs?: number;
  /** Ready after this long even without seeing the "started" line (its log may go elsewhere). */
  readyFallbackMs?: number;
  /**
   * A hosts file dnsmasq is given (--addn-hosts): on a SIGHUP it says "read <file> - N names"
   * instead of "cleared cache" (which it says only when it reads no hosts file at all).
   */
  hostsFile?: string;
}

type Outcome = { exitCode?: number | undefined; signal?: string; failed?: boolean; code?: string; originalMessage?: string; message?: string };

/** SIGKILL to the process group `pid` leads (dnsmasq and its TCP children); quiet if it is gone. */
export function killProcessGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* gone already */
  }
}

const KEEP_LINES = 8;
const WARNING = /\b(bad|fail(ed|ure)?|error|cannot|can't|illegal|refused|unknown|warning|denied|not found|no such)\b/i;

export class DnsmasqProcess {
  readonly pid: number | undefined;
  /** Resolves when it has exited (never rejects). */
  readonly exited: Promise<ExitInfo>;
  private readonly proc: ResultPromise;
  private readonly started = Date.now();
  private readonly lines: string[] = [];
  private isReady = false;
  private hasExited = false;
  private readyTimer: NodeJS.Timeout | undefined;
  private readyWaiters: (() => void)[] = [];
  /** SIGHUPs sent that dnsmasq has not yet confirmed. */
  private reloadsPending = 0;
  /**
   * SIGHUPs dnsmasq confirmed: it handles one in a single pass of its loop, and says "cleared
   * cache" in it, or "read <hosts file> - N names" when it reads hosts files (it always reads
   * the nanny's --addn-hosts file).
   */
  reloadsApplied = 0;

  constructor(private readonly opts: DnsmasqProcessOptions) {
    this.proc = execa(opts.exec, [...opts.args], {
      reject: false,
      stdin: 'ignore',
      buffer: false,
      // We stop it ourselves (SIGTERM, then SIGKILL after a timeout in stop()).
      forceKillAfterDelay: false,
      // Its own process group (with -k dnsmasq does not start a session of its own, so its TCP
      // children stay in it). execa's cleanup skips detached processes: the nanny kills the
      // group on its way out instead (main.ts).
      detached: true,
    });
    this.pid = this.proc.pid;
    const log = opts.log.child({ dnsmasqPid: this.pid });
    const hostsRead = opts.hostsFile === undefined ? undefined : `read ${opts.hostsFile} - `;
    const reloaded = (line: string) => /\bcleared cache\b/.test(line) || (hostsRead !== undefined && line.includes(hostsRead));
    const relay = (stream: Readable | null, name: string) => {
      if (!stream) return;
      eachLine(stream, (line) => {
        if (line.trim() === '') return;
        this.lines.push(line);
        if (this.lines.length > KEEP_LINES) this.lines.shift();
        log[WARNING.test(line) ? 'warn' : 'info']({ stream: name }, line);
        if (!this.isReady && /\bstarted, version\b/.test(line)) this.scheduleReady(opts.readyMarginMs ?? 100);
        // dnsmasq handles a SIGHUP in one pass of its single-threaded loop, and says "cleared
        // cache" in it: any query it reads after that line sees the new servers and hosts
        if (this.reloadsPending > 0 && reloaded(line)) {
          this.reloadsPending--;
          this.reloadsApplied++;
          log.info({ reloadsApplied: this.reloadsApplied }, 'dnsmasq applied the reload');
        }
      }, () => log.debug({ stream: name }, `Got EOF from ${name}`));
    };
    relay(this.proc.stdout, 'stdout');
    relay(this.proc.stderr, 'stderr');
    this.scheduleReady(opts.readyFallbackMs ?? 1000);

    let resolveExited!: (info: ExitInfo) => void;
    this.exited = new Promise((r) => (resolveExited = r));
    let finished = false;
    const finish = (r: Outcome): void => {
      if (finished) return;
      finished = true;
      this.proc.stdout?.destroy();
      this.proc.stderr?.destroy();
      resolveExited(this.finish(r));
    };
    this.proc.once('exit', (code, signal) => {
      this.hasExited = true;
      killProcessGroup(this.pid); // its TCP children, if any
      // its last lines may still be in the pipes, which close once the group is gone: execa's
      // result comes then; if something else holds them, the exit is reported regardless
      setTimeout(() => finish(signal ? { signal } : { exitCode: code ?? undefined }), 500).unref();
    });
    // execa's result: a spawn failure (no 'exit' event), or the exit once the pipes closed
    this.proc.then(
      (r) => finish(r),
      (e: unknown) => finish(e as Outcome),
    );
  }

  private finish(r: Outcome): ExitInfo {
    this.hasExited = true;
    if (this.readyTimer) clearTimeout(this.readyTimer);
    this.readyWaiters.splice(0).forEach((w) => w());
    const info: ExitInfo = { lastLines: [...this.lines], uptimeMs: Date.now() - this.started };
    if (r.signal) info.signal = r.signal;
    else if (r.exitCode !== undefined) info.code = r.exitCode;
    else info.spawnError = r.originalMessage || r.message || r.code || 'unknown error';
    return info;
  }

  private scheduleReady(ms: number): void {
    if (this.readyTimer) clearTimeout(this.readyTimer);
    this.readyTimer = setTimeout(() => {
      if (this.hasExited) return;
      this.isReady = true;
      this.readyWaiters.splice(0).forEach((w) => w());
    }, ms);
    this.readyTimer.unref();
  }

  get ready(): boolean {
    return this.isReady && !this.hasExited;
  }

  get running(): boolean {
    return !this.hasExited && this.pid !== undefined;
  }

  /** Resolves once ready, or once it has exited. */
  whenReady(): Promise<void> {
    if (this.isReady || this.hasExited) return Promise.resolve();
    return new Promise((r) => this.readyWaiters.push(r));
  }

  /** Sends a signal; false if the process is gone. */
  signal(sig: NodeJS.Signals): boolean {
    if (!this.running) return false;
    try {
      const sent = this.proc.kill(sig);
      if (sent && sig === 'SIGHUP') this.reloadsPending++;
      return sent;
    } catch {
      return false;
    }
  }

  /** SIGKILL to it and its TCP children (a hung or stopped dnsmasq). */
  kill(): void {
    if (this.running) killProcessGroup(this.pid);
  }

  /** SIGTERM (and SIGCONT, should it be stopped), then SIGKILL to its group if it has not exited within `timeoutMs`. */
  async stop(timeoutMs = 5000): Promise<ExitInfo> {
    if (this.running) {
      this.signal('SIGTERM');
      this.signal('SIGCONT');
      const timer = setTimeout(() => this.kill(), timeoutMs);
      try {
        return await this.exited;
      } finally {
        clearTimeout(timer);
      }
    }
    return this.exited;
  }
}
