// Keeps one dnsmasq running. An unexpected exit is followed by a restart after an exponential
// backoff (100 ms doubling to 10 s); too many failures within a minute end in `fatal`, so the
// nanny exits and the kubelet shows a crash loop instead of a pod that answers nothing.
// (The original nanny exited on the first dnsmasq exit.)
import { EventEmitter } from 'node:events';
import type { Logger } from '@kube-dns/config';
import { type ExitInfo, describeExit } from './dnsmasq-process.js';

export interface SupervisedProcess {
  readonly pid: number | undefined;
  readonly exited: Promise<ExitInfo>;
  readonly ready: boolean;
  whenReady(): Promise<void>;
  signal(sig: NodeJS.Signals): boolean;
  /** SIGKILL to it and whatever it forked. */
  kill(): void;
  stop(timeoutMs?: number): Promise<ExitInfo>;
}

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface SupervisorOptions {
  spawn: () => SupervisedProcess;
  log: Logger;
  clock?: Clock;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** This many failures within failureWindowMs are fatal. */
  maxFailures?: number;
  failureWindowMs?: number;
}

export interface SupervisorEvents {
  started: [{ pid: number | undefined; restart: boolean }];
  exited: [ExitInfo];
  fatal: [Error];
}

export class Supervisor extends EventEmitter<SupervisorEvents> {
  private proc: SupervisedProcess | undefined;
  private failures: number[] = [];
  private consecutive = 0;
  private restartTimer: unknown;
  private stopping = false;
  private reloadPendingFor: SupervisedProcess | undefined;
  private readonly clock: Clock;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxFailures: number;
  private readonly failureWindowMs: number;
  restarts = 0;

  constructor(private readonly opts: SupervisorOptions) {
    super();
    this.clock = opts.clock ?? systemClock;
    this.initialBackoffMs = opts.initialBackoffMs ?? 100;
    this.maxBackoffMs = opts.maxBackoffMs ?? 10_000;
    this.maxFailures = opts.maxFailures ?? 5;
    this.failureWindowMs = opts.failureWindowMs ?? 60_000;
  }

  /** The running process, if any. */
  get current(): SupervisedProcess | undefined {
    return this.proc;
  }

  start(): void {
    this.launch(false);
  }

  /**
   * Asks dnsmasq to re-read its servers file and hosts files (SIGHUP). Held back until a starting
   * process can take signals; nothing to do between restarts (the next process reads the files).
   */
  reload(): void {
    const p = this.proc;
    if (!p) return;
    if (p.ready) {
      p.signal('SIGHUP');
      return;
    }
    if (this.reloadPendingFor === p) return;
    this.reloadPendingFor = p;
    void p.whenReady().then(() => {
      if (this.reloadPendingFor === p) this.reloadPendingFor = undefined;
      if (this.proc === p && p.ready) p.signal('SIGHUP');
    });
  }

  /** Sends a signal to a ready process (e.g. SIGUSR1 for cache statistics). */
  signal(sig: NodeJS.Signals): boolean {
    return this.proc?.ready ? this.proc.signal(sig) : false;
  }

  /**
   * A process that no longer answers but has not exited (stopped, wedged): SIGKILL works on a
   * stopped process too, and its exit then takes the normal restart path with its backoff. Its
   * TCP children go with it (they would keep its port).
   */
  killHung(pid: number | undefined, why: string): void {
    const p = this.proc;
    if (!p || p.pid !== pid || this.stopping) return;
    this.opts.log.error({ dnsmasqPid: pid }, `dnsmasq is hung: ${why}; killing it (SIGKILL) to restart it`);
    p.kill();
  }

  async stop(timeoutMs = 5000): Promise<void> {
    this.stopping = true;
    if (this.restartTimer !== undefined) this.clock.clearTimeout(this.restartTimer);
    const p = this.proc;
    if (p) await p.stop(timeoutMs);
  }

  private launch(restart: boolean): void {
    this.restartTimer = undefined;
    if (this.stopping) return;
    const p = this.opts.spawn();
    this.proc = p;
    if (restart) this.restarts++;
    this.opts.log.info({ dnsmasqPid: p.pid, restart }, restart ? 'dnsmasq restarted' : 'dnsmasq started');
    this.emit('started', { pid: p.pid, restart });
    void p.exited.then((info) => this.onExit(p, info));
  }

  private onExit(p: SupervisedProcess, info: ExitInfo): void {
    if (this.proc === p) this.proc = undefined;
    this.emit('exited', info);
    if (this.stopping) return;

    const now = this.clock.now();
    // A process that ran for a whole window was healthy: start the backoff from the bottom.
    if (info.uptimeMs >= this.failureWindowMs) this.consecutive = 0;
    this.consecutive++;
    this.failures = this.failures.filter((t) => now - t < this.failureWindowMs);
    this.failures.push(now);

    if (this.failures.length >= this.maxFailures) {
      const err = new Error(
        `dnsmasq failed ${this.failures.length} times within ${Math.round(this.failureWindowMs / 1000)} s, giving up: it ${describeExit(info)}`,
      );
      this.opts.log.error({ dnsmasqPid: p.pid, failures: this.failures.length }, err.message);
      this.emit('fatal', err);
      return;
    }
    const delay = Math.min(this.initialBackoffMs * 2 ** (this.consecutive - 1), this.maxBackoffMs);
    this.opts.log.error(
      { dnsmasqPid: p.pid, restartInMs: delay, failures: this.failures.length, lastOutput: info.lastLines },
      `dnsmasq ${describeExit(info, false)}; restarting in ${delay} ms`,
    );
    this.restartTimer = this.clock.setTimeout(() => this.launch(true), delay);
  }
}
