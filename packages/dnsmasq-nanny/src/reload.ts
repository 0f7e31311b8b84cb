// Applies a new set of `server=` lines to the running dnsmasq without losing queries.
//
// dnsmasq drops a forward in flight to a server that a SIGHUP reload removes, and folds a
// client's retry of that question into the dead forward (measured: a plain rewrite + SIGHUP lost
// 1-2 of ~1,300 lookups over 10 switches). So a change is applied in two steps:
//   1. write old ∪ new, SIGHUP: the new servers are live, the old ones still take replies;
//   2. after a grace period, write new only, SIGHUP: the old ones are gone.
// Changes arriving during a grace period are merged into the transition (the file grows to the
// union of everything still possibly in use) and restart the grace period, up to a cap so that
// a flapping config cannot keep old servers forever.
import type { Logger } from '@kube-dns/config';
import { sameLines, unionLines } from './servers-file.js';
import { type Clock, systemClock } from './supervisor.js';

export interface ServersReloaderOptions {
  /** Replaces the servers file (atomically). */
  write: (lines: readonly string[]) => Promise<void>;
  /** Makes dnsmasq re-read it (SIGHUP). */
  signal: () => void;
  graceMs: number;
  log: Logger;
  clock?: Clock;
  /** The longest a transition may last however often the config changes (default 4 × grace). */
  maxTransitionMs?: number;
}

export class ServersReloader {
  private written: string[];
  private target: string[];
  private graceTimer: unknown;
  private transitionStarted = 0;
  private queue: Promise<void> = Promise.resolve();
  private idleWaiters: (() => void)[] = [];
  private readonly clock: Clock;
  private stopped = false;
  reloads = 0;

  /** `initial`: the lines already in the file that dnsmasq was started with. */
  constructor(
    initial: readonly string[],
    private readonly opts: ServersReloaderOptions,
  ) {
    this.written = [...initial];
    this.target = [...initial];
    this.clock = opts.clock ?? systemClock;
  }

  /** The lines in the file now (during a transition: old ∪ new). */
  get inFile(): readonly string[] {
    return this.written;
  }

  /** The lines that will remain once the transition is over. */
  get desired(): readonly string[] {
    return this.target;
  }

  get transitioning(): boolean {
    return this.graceTimer !== undefined;
  }

  /** Applies `lines`; resolves once step 1 is written and signalled. */
  apply(lines: readonly string[]): Promise<void> {
    const next = [...lines];
    this.queue = this.queue.then(() => this.applyNow(next)).catch((e: unknown) => {
      // Forget the target, so that the next apply (the periodic refresh) tries again.
      this.target = [...this.written];
      this.opts.log.error({ err: (e as Error).message }, 'cannot write the dnsmasq servers file; dnsmasq keeps its current servers');
    });
    return this.queue;
  }

  /** Resolves when no transition is pending (the file holds exactly the desired lines). */
  settled(): Promise<void> {
    if (!this.transitioning) return this.queue;
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /** Cancels a pending step 2 (shutdown). */
  stop(): void {
    this.stopped = true;
    if (this.graceTimer !== undefined) this.clock.clearTimeout(this.graceTimer);
    this.graceTimer = undefined;
    this.idleWaiters.splice(0).forEach((w) => w());
  }

  private async applyNow(next: string[]): Promise<void> {
    if (this.stopped) return;
    const unchanged = sameLines(next, this.target);
    this.target = next;
    if (unchanged) return;

    const added = next.filter((l) => !this.written.includes(l));
    const removing = this.written.filter((l) => !next.includes(l));
    if (added.length > 0) {
      // with nothing to drain the new lines go as they are: a union in the old order would take a
      // second SIGHUP (and a second emptied cache) to reorder
      const union = this.opts.graceMs > 0 && removing.length > 0 ? unionLines(this.written, next) : next;
      await this.writeAndSignal(union, removing.length > 0 && this.opts.graceMs > 0 ? 'added' : 'final', { added });
    } else if (removing.length === 0) {
      // the same servers in another order (upstreamNameservers reordered): nothing to drain, and
      // with --strict-order dnsmasq asks them in the file's order, so it applies at once
      await this.writeAndSignal(next, 'final', { reordered: true });
    }
    if (!sameLines(this.written, this.target)) this.armGrace();
    else this.finishTransition();
  }

  private armGrace(): void {
    const now = this.clock.now();
    if (this.graceTimer === undefined) this.transitionStarted = now;
    else this.clock.clearTimeout(this.graceTimer);
    const cap = this.opts.maxTransitionMs ?? 4 * this.opts.graceMs;
    const delay = Math.max(0, Math.min(this.opts.graceMs, this.transitionStarted + cap - now));
    this.graceTimer = this.clock.setTimeout(() => {
      this.queue = this.queue.then(() => this.completeTransition());
    }, delay);
    const t = this.graceTimer as { unref?: () => void };
    t.unref?.();
  }

  private async completeTransition(): Promise<void> {
    if (this.stopped) return;
    const removed = this.written.filter((l) => !this.target.includes(l));
    try {
      await this.writeAndSignal(this.target, 'final', { removed });
    } catch (e) {
      // Keep listing the old servers rather than nothing; try again after another grace period.
      this.opts.log.error({ err: (e as Error).message }, 'cannot write the dnsmasq servers file; retrying');
      this.graceTimer = undefined;
      this.armGrace();
      return;
    }
    this.finishTransition();
  }

  private finishTransition(): void {
    this.graceTimer = undefined;
    this.idleWaiters.splice(0).forEach((w) => w());
  }

  private async writeAndSignal(lines: string[], phase: 'added' | 'final', change: { added?: string[]; removed?: string[]; reordered?: boolean }): Promise<void> {
    await this.opts.write(lines);
    this.written = lines;
    this.opts.signal();
    this.reloads++;
    this.opts.log.info(
      { phase, servers: lines, ...change },
      phase === 'final' ? 'dnsmasq servers updated' : 'dnsmasq servers added; the replaced ones stay until the grace period ends',
    );
  }
}
