// List-then-watch of one resource, kept in step with the API server forever:
//   list (consistent snapshot) → apply → delete what vanished → watch from the list's RV
//   watch ends        → watch again from the last RV seen (no loss, no duplicates)
//   410 Gone          → list again (on a continue token: list again in one request, unpaged)
//   which version a list asks for, as client-go (so a fleet's relists land on the API servers'
//   watch caches, not on etcd): the first at resourceVersion=0 (any: the cache), paged; later
//   ones not older than the last RV seen, in one request (the cache serves only unpaged lists at
//   a version); if the server has not got that version (410, or 504 "too large" after an etcd
//   restore), at once the latest (no version). A server that paged the first list (no watch
//   cache) keeps getting paged lists.
//   anything failing  → retry after an exponential, jittered backoff; log what failed and when next
//   watch refused twice in a row (an HTTP error, an ERROR event) → list again (after the backoff)
//   watch refused with 429 / 503 (throttled) → watch again from the last RV, after at least 1 s
// Only key → resourceVersion is kept, never whole objects: memory stays flat with cluster size.
import { EventEmitter } from 'node:events';
import { randomInt } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '@kube-dns/config';
import { LogLimiter } from '../forward/log-limiter.js';
import { joinKey } from '../records/names.js';
import { compactVersion, KnownObjects } from './known-objects.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import { realClock, type Clock } from './clock.js';
import { describeError, isGone, isTooLargeResourceVersion, retryAfterMs } from './errors.js';
import type { ListFn } from './list-api.js';
import { watchOnce, type RunningWatch, type WatchEventObject, type WatchOutcome } from './watch-once.js';

/** Least wait before re-watching after a 429 / 503 (kube-apiserver's Retry-After is 1 s or more). */
const THROTTLED_RETRY_MIN_MS = 1000;

export interface ObjectWithMeta {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
}

export interface ReflectorHandler<T> {
  upsert(obj: T): void;
  /** The object is gone (a DELETED event, or absent from a relist). */
  delete(namespace: string, name: string): void;
}

export interface ReflectorOptions<T> {
  /** 'services', ...: for logs and stats. */
  resource: string;
  kc: KubeConfig;
  /** Cluster-wide collection path the watch uses, e.g. /api/v1/services. */
  watchPath: string;
  /** The watch's labelSelector (the list function carries its own). */
  labelSelector?: string;
  list: ListFn<T>;
  handler: ReflectorHandler<T>;
  log: Logger;
  clock?: Clock;
  /** Objects per list page. Default 500 (client-go's pager). */
  pageSize?: number;
  /** Yield to the event loop after applying this many objects, so DNS is served during a big list. Default 200. */
  yieldEvery?: number;
  backoff?: Partial<BackoffOptions>;
  /** Abort a list page that takes longer. Default 60 s. */
  listTimeoutMs?: number;
  /** Server-side watch timeout, picked at random in [min, max] s per watch. Default 300-600. */
  watchTimeoutSeconds?: { min: number; max: number };
  /** A watch that lasted this long (or delivered any event) resets the backoff. Default 30 s. */
  healthyWatchMs?: number;
  /** A watch silent this long (no event, no bookmark) is abandoned and the resource relisted. Default 180 s. */
  watchIdleMs?: number;
  /** Longest Retry-After honoured (a larger one is cut to this). Default 5 min. */
  maxRetryAfterMs?: number;
}

export interface ReflectorStats {
  /** Objects currently known. */
  objects: number;
  /** Full lists after the first one (410s, expired continue tokens). */
  relists: number;
  /** Watches started after the first one. */
  watchRestarts: number;
  /** Failed lists and watches, and handler exceptions. */
  errors: number;
  /** Epoch ms of the last ADDED/MODIFIED/DELETED applied from a watch; null before any. */
  lastEventAt: number | null;
  /** Epoch ms of the last completed list; null before the first. */
  lastSyncAt: number | null;
  /**
   * Epoch ms of the last time the API server was heard from about the resource: a completed list,
   * any watch event (BOOKMARKs included: a real server sends one about once a minute on a quiet
   * resource) or a watch it closed itself. A watch resumed after a reset hears only bookmarks.
   */
  lastHeardAt: number | null;
  synced: boolean;
  /** The last resourceVersion seen ('' before the first list). */
  resourceVersion: string;
  /** What failed last (list, watch or handler), null if nothing did yet. */
  lastError: string | null;
}

/**
 * Events: 'synced' (once, after the first complete list), 'listed' (every complete list),
 * 'watching' (each watch accepted by the server).
 */
export class Reflector<T extends ObjectWithMeta> extends EventEmitter {
  private readonly known = new KnownObjects();
  private readonly clock: Clock;
  private readonly backoff: Backoff;
  private readonly stopper = new AbortController();
  private current: RunningWatch | undefined;
  private loop: Promise<void> | undefined;
  private lists = 0;
  private watches = 0;
  private errorCount = 0;
  private lastError: string | null = null;
  private lastEventAt: number | null = null;
  private lastSyncAt: number | null = null;
  private lastHeardAt: number | null = null;
  private rv = '';
  private isSynced = false;
  /** The last RV could not be listed at (410, or ahead of the server): list the latest until a list succeeds. */
  private rvUnavailable = false;
  /** The first list (resourceVersion=0) came in pages: this server lists from etcd (no watch cache), keep paging. */
  private serverPages = false;

  constructor(private readonly o: ReflectorOptions<T>) {
    super();
    this.clock = o.clock ?? realClock;
    this.backoff = new Backoff(o.backoff, () => this.clock.random());
  }

  get synced(): boolean {
    return this.isSynced;
  }

  start(): void {
    this.loop ??= this.run().catch((e: unknown) => {
      // Unreachable by design (every step catches); if it happens, say so loudly.
      this.o.log.error({ resource: this.o.resource, err: describeError(e) }, 'reflector loop died');
    });
  }

  /** Aborts the list, watch or sleep in progress; resolves once nothing is left running. */
  async stop(): Promise<void> {
    this.stopper.abort();
    this.current?.abort();
    await this.loop;
  }

  private get stopped(): boolean {
    return this.stopper.signal.aborted;
  }

  stats(): ReflectorStats {
    return {
      objects: this.known.size,
      relists: Math.max(0, this.lists - 1),
      watchRestarts: Math.max(0, this.watches - 1),
      errors: this.errorCount,
      lastEventAt: this.lastEventAt,
      lastSyncAt: this.lastSyncAt,
      lastHeardAt: this.lastHeardAt,
      synced: this.isSynced,
      resourceVersion: this.rv,
      lastError: this.lastError,
    };
  }

  private async run(): Promise<void> {
    let needList = true;
    /** Watches in a row that ended in an error. */
    let failedWatches = 0;
    while (!this.stopped) {
      /** This watch starts from the resourceVersion of a list made just before it. */
      const afterList = needList;
      if (needList) {
        if (!(await this.listAll())) return;
        needList = false;
      }
      // stop() may have run while the list finished (its 'synced' listeners run first): it found
      // no watch to abort, so none must start now
      if (this.stopped) return;
      const started = this.clock.now();
      let events = 0;
      this.watches++;
      const w = watchOnce({
        kc: this.o.kc,
        path: this.o.watchPath,
        ...(this.o.labelSelector && { labelSelector: this.o.labelSelector }),
        resourceVersion: this.rv,
        timeoutSeconds: this.pickWatchTimeout(),
        graceMs: 60_000,
        idleMs: this.o.watchIdleMs ?? 180_000,
        onEvent: (type, obj) => {
          events++;
          this.onWatchEvent(type, obj);
        },
        onEstablished: () => this.emit('watching'),
      });
      this.current = w;
      const outcome: WatchOutcome = await w.done;
      this.current = undefined;
      if (this.stopped || outcome.kind === 'aborted') return;

      const elapsed = this.clock.now() - started;
      // A clean close after a second or more (the server's timeout, or a proxy's idle timeout on a
      // quiet resource) is no failure: re-watch at once, as client-go does. Closed sooner with no
      // event, it is (a server that ends every watch at once must not get a tight loop).
      // A 410 on a watch resumed from an older resourceVersion is the server answering: its
      // history no longer reaches back that far (after a restart its watch cache starts anew).
      // Relist at once: the backoff may still be at its ceiling from the outage, and waiting it
      // out again kept the records stale that much longer. A 410 right after a list is no such
      // case (lists that cannot keep up): that one backs off, so relists never loop.
      const goneAfterResume = outcome.kind === 'expired' && !afterList;
      const healthy =
        goneAfterResume || events > 0 || elapsed >= (this.o.healthyWatchMs ?? 30_000) || (outcome.kind === 'closed' && elapsed >= 1000);
      if (healthy) this.backoff.reset();
      let delay = healthy ? 0 : this.backoff.next();
      // An overloaded API server (Priority & Fairness: 429) or one not ready (503) asks for a
      // retry, not a relist (client-go re-watches too). client-node's Watch error carries no
      // Retry-After, so a floor stands in for it: a fleet must not return within the backoff's 200 ms.
      const throttled = outcome.kind === 'error' && (outcome.status === 429 || outcome.status === 503);
      if (throttled) delay = Math.max(delay, THROTTLED_RETRY_MIN_MS);
      const ctx = { resource: this.o.resource, resourceVersion: this.rv, events, retryInMs: delay };
      if (outcome.kind !== 'error') failedWatches = 0;
      if (outcome.kind === 'expired') {
        needList = true;
        this.o.log.info({ ...ctx, reason: outcome.message }, 'watch resourceVersion expired (410); relisting');
      } else if (outcome.kind === 'idle') {
        needList = true;
        this.noteError(`watch: ${outcome.message}`);
        this.o.log.warn({ ...ctx, err: outcome.message }, 'watch silent for too long (no event, no bookmark); relisting');
      } else if (outcome.kind === 'error') {
        this.noteError(`watch: ${outcome.message}`);
        // A watch the server keeps refusing (403 on watch alone, an ERROR event at every resume)
        // would never bring a change again while the list still works: after two such answers in
        // a row, list again (client-go's ListAndWatch relists after a watch error it does not
        // retry), so the data is at most one backoff old. A transport failure (the server down,
        // a connection reset) resumes from the last RV, as client-go retries those.
        // A throttled watch resumes from the last RV too, and leaves the count as it is.
        if (!throttled) failedWatches = outcome.http ? failedWatches + 1 : 0;
        needList = failedWatches >= 2;
        if (needList) failedWatches = 0;
        this.o.log.warn({ ...ctx, err: outcome.message, relist: needList }, needList ? 'watch failed again; relisting' : 'watch failed; retrying');
      } else {
        this.lastHeardAt = this.clock.now(); // it answered, and ended the watch itself
        this.o.log.debug(ctx, 'watch closed by the server; resuming');
      }
      if (delay > 0) await this.clock.sleep(delay, this.stopper.signal);
    }
  }

  /**
   * The backoff's next delay, or the server's Retry-After when longer (429 Too Many Requests and
   * 503 carry it: an overloaded apiserver asks clients to stay away that long, and a fleet of
   * replicas retrying sooner would keep it overloaded).
   */
  private retryDelay(e: unknown): number {
    const delay = this.backoff.next();
    const after = retryAfterMs(e);
    return after === undefined ? delay : Math.max(delay, Math.min(after, this.o.maxRetryAfterMs ?? 300_000));
  }

  private pickWatchTimeout(): number {
    const { min, max } = this.o.watchTimeoutSeconds ?? { min: 300, max: 600 };
    return max > min ? randomInt(min, max + 1) : min;
  }

  /** '<ns>/<name>', for log lines about one object (never kept). */
  private static describe(namespace: string, name: string): string {
    return joinKey(namespace, name);
  }

  private onWatchEvent(type: string, obj: WatchEventObject): void {
    const rv = obj?.metadata?.resourceVersion;
    this.lastHeardAt = this.clock.now();
    if (type === 'BOOKMARK') {
      if (rv) this.rv = rv;
      return;
    }
    const name = obj?.metadata?.name;
    if (!name) return;
    const namespace = obj.metadata?.namespace ?? '';
    if (type === 'ADDED' || type === 'MODIFIED') {
      const version = compactVersion(rv ?? '');
      if (rv === undefined || this.known.get(namespace, name) !== version) {
        this.known.set(namespace, name, version);
        this.safely(() => this.o.handler.upsert(obj as T), namespace, name);
      }
    } else if (type === 'DELETED') {
      this.known.delete(namespace, name);
      this.safely(() => this.o.handler.delete(namespace, name), namespace, name);
    } else {
      return;
    }
    if (rv) this.rv = rv;
    this.lastEventAt = this.clock.now();
  }

  private noteError(what: string): void {
    this.errorCount++;
    this.lastError = what;
  }

  /** One log line per 10 s for objects that fail to apply: a flood of bad objects must not flood the log. */
  private readonly applyLog = new LogLimiter(10_000);

  private safely(fn: () => void, namespace: string, name: string): void {
    try {
      fn();
    } catch (e) {
      const key = Reflector.describe(namespace, name);
      this.noteError(`applying ${key}: ${describeError(e)}`);
      this.applyLog.maybe((suppressed) =>
        this.o.log.error({ resource: this.o.resource, key, err: describeError(e), suppressed }, 'applying an object failed; skipped (counted in kubedns_kube_errors_total)'),
      );
    }
  }

  /** client-go's relistResourceVersion: '0' first (any), then the last RV seen, '' (the latest) once that failed. */
  private listVersion(): string {
    if (this.rvUnavailable) return '';
    return this.rv === '' ? '0' : this.rv;
  }

  /** A full list; false when stopped. A failed list is made again (with backoff) from its first page, forever. */
  private async listAll(): Promise<boolean> {
    const pageSize = this.o.pageSize ?? 500;
    const yieldEvery = this.o.yieldEvery ?? 200;
    // The objects of this list: what `known` has beyond them once it is complete was deleted.
    let seen = new KnownObjects();
    let token: string | undefined;
    let listRv: string | undefined;
    let sinceYield = 0;
    let version = this.listVersion();
    /** A continue token expired: list in one request (limit 0) until that succeeds. */
    let unpaged = false;
    /** This list came in more than one page. */
    let paginated = false;
    for (;;) {
      if (this.stopped) return false;
      // A list at a version (not '0', not the latest) is served from the watch cache only without a
      // limit; with one, it is an exact read from etcd, the load this order of versions avoids.
      const limit = unpaged || (version !== '' && version !== '0' && !this.serverPages) ? 0 : pageSize;
      let page;
      try {
        page = await this.listPage(limit, token, version);
      } catch (e) {
        if (this.stopped) return false;
        this.noteError(`list: ${describeError(e)}`);
        if (isGone(e) && token !== undefined) {
          // The list outlasted the snapshot behind its continue token (etcd compaction, 5 min):
          // paging again from the first page can do so for ever. As client-go's pager
          // (FullListIfExpired): one unpaginated list, at once.
          token = undefined;
          listRv = undefined;
          seen = new KnownObjects();
          paginated = false;
          unpaged = true;
          this.o.log.warn({ resource: this.o.resource, err: describeError(e) }, 'list continue token expired; listing everything in one request');
          continue;
        }
        if (token === undefined && version !== '' && (isGone(e) || isTooLargeResourceVersion(e))) {
          // The server has no longer (compacted) or not yet (restored from a backup) the version
          // asked for: waiting cannot bring it, the latest can.
          this.rvUnavailable = true;
          version = '';
          listRv = undefined;
          seen = new KnownObjects();
          paginated = false;
          this.o.log.info({ resource: this.o.resource, err: describeError(e) }, 'the API server cannot list at the last resourceVersion; listing the latest');
          continue;
        }
        const delay = this.retryDelay(e);
        this.o.log.warn(
          { resource: this.o.resource, err: describeError(e), page: unpaged ? 'all' : token === undefined ? 'first' : 'next', retryInMs: delay },
          'list failed; listing again from the first page',
        );
        // As client-go (its pager gives up on any error but an expired token, and the reflector
        // lists anew): from the first page, paged. The same continue token again would be tried
        // for ever if the server no longer takes it (no watch open all that time), and a list
        // in one request that failed (too big for one answer) would be tried unpaged for ever.
        token = undefined;
        listRv = undefined;
        seen = new KnownObjects();
        paginated = false;
        unpaged = false;
        await this.clock.sleep(delay, this.stopper.signal);
        version = this.listVersion();
        continue;
      }
      listRv ??= page.metadata?.resourceVersion ?? '';
      for (const obj of page.items) {
        const name = obj?.metadata?.name;
        if (!name) continue;
        const namespace = obj.metadata?.namespace ?? '';
        const rv = obj.metadata?.resourceVersion ?? '';
        const objVersion = compactVersion(rv);
        seen.set(namespace, name, objVersion);
        if (this.known.get(namespace, name) !== objVersion || rv === '') {
          this.known.set(namespace, name, objVersion);
          this.safely(() => this.o.handler.upsert(obj), namespace, name);
        }
        if (++sinceYield >= yieldEvery) {
          sinceYield = 0;
          await yieldToLoop();
        }
      }
      token = page.metadata?._continue || undefined;
      if (!token) break;
      paginated = true;
    }
    if (version === '0' && paginated) this.serverPages = true;
    this.rvUnavailable = false;
    let deleted = 0;
    for (const [namespace, name] of this.known.missingFrom(seen)) {
      this.known.delete(namespace, name);
      deleted++;
      this.safely(() => this.o.handler.delete(namespace, name), namespace, name);
      if (++sinceYield >= yieldEvery) {
        sinceYield = 0;
        await yieldToLoop();
      }
    }
    this.rv = listRv ?? '';
    this.lists++;
    this.lastSyncAt = this.clock.now();
    this.lastHeardAt = this.lastSyncAt;
    this.o.log.info(
      { resource: this.o.resource, objects: this.known.size, deleted, resourceVersion: this.rv, askedFor: version === '' ? 'latest' : version, relist: this.lists > 1 },
      'listed',
    );
    this.emit('listed');
    if (!this.isSynced) {
      this.isSynced = true;
      this.emit('synced');
    }
    return true;
  }

  private async listPage(limit: number, continueToken: string | undefined, resourceVersion: string) {
    const ctl = new AbortController();
    const onStop = (): void => ctl.abort();
    this.stopper.signal.addEventListener('abort', onStop, { once: true });
    const timeoutMs = this.o.listTimeoutMs ?? 60_000;
    const timer = setTimeout(() => ctl.abort(new Error(`list timed out after ${timeoutMs} ms`)), timeoutMs);
    try {
      const page = await this.o.list({ limit, ...(continueToken !== undefined ? { continueToken } : { resourceVersion }), signal: ctl.signal });
      // a 200 whose body is no list (a Status, `{}` from a proxy) is a failed list: taken as an
      // empty one, every object of the resource would be deleted from DNS (client-go fails it too)
      if (!Array.isArray(page?.items)) throw new Error(`the list response has no items (kind ${JSON.stringify((page as { kind?: unknown } | undefined)?.kind ?? null)})`);
      return page;
    } catch (e) {
      // An abort surfaces as a bare AbortError; report why it was aborted instead.
      if (ctl.signal.aborted && ctl.signal.reason instanceof Error && !this.stopped) throw ctl.signal.reason;
      throw e;
    } finally {
      clearTimeout(timer);
      this.stopper.signal.removeEventListener('abort', onStop);
    }
  }
}
