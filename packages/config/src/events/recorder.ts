// Kubernetes Events (core/v1) from kube-dns and the nanny, without a Kubernetes client library:
// a POST to create an Event, a PATCH to bump its count, over node's http/https. The nanny has no
// client and must stay small; this is all either binary needs.
//
// What it promises:
//   - emit() returns at once and never throws: a reload or a restart never waits for the API.
//   - identical Events (same object, type, reason, message) are aggregated as client-go does:
//     one Event whose `count` and `lastTimestamp` are PATCHed, not a new Event each time; emits
//     that arrive while a request is in flight are folded into the next PATCH.
//   - one request at a time, each with a timeout; the queue is bounded. An Event that could not
//     be sent is tried again after a backoff (5 s doubling to 1 min, for 10 min at most), so a
//     short API outage does not lose it; failures are logged once per outage.
import { Buffer } from 'node:buffer';
import type { RequestOptions } from 'node:https';
import type { Logger } from '../log.js';

export interface ObjectReference {
  kind: string;
  apiVersion: string;
  namespace: string;
  name: string;
  uid?: string;
  /** e.g. spec.containers{dnsmasq} */
  fieldPath?: string;
}

export type EventType = 'Normal' | 'Warning';

/** Where the API server is and how to talk to it: request options carry TLS and Authorization. */
export interface ApiEndpoint {
  /** https://host:port (or http:// for tests), no trailing slash. */
  server: string;
  /** Called before each request: credentials may rotate (service-account tokens do). */
  options(): Promise<RequestOptions> | RequestOptions;
}

export interface EventRecorderOptions {
  /** Resolves to the API endpoint; undefined: Events are off (logged once). */
  endpoint: () => Promise<ApiEndpoint | undefined> | ApiEndpoint | undefined;
  /** source.component and reportingComponent, e.g. "kube-dns". */
  component: string;
  /** source.host: the node name. */
  host?: string;
  /** reportingInstance: the pod name. */
  instance?: string;
  log: Logger;
  /** Per request (default 5 s). */
  timeoutMs?: number;
  /** Distinct Events remembered for aggregation (default 256). */
  cacheSize?: number;
  /** Distinct Events waiting to be sent; more are dropped (default 64). */
  maxPending?: number;
  /** First wait before sending a failed Event again (default 5 s; doubles to 1 min). */
  retryDelayMs?: number;
  /** How long the latest occurrence of an Event is tried before it is given up (default 10 min). */
  giveUpMs?: number;
  now?: () => Date;
}

interface Entry {
  ref: ObjectReference;
  type: EventType;
  reason: string;
  message: string;
  /** The Event's name once created. */
  name?: string;
  firstTimestamp: string;
  lastTimestamp: string;
  /** Occurrences so far. */
  count: number;
  /** When the first attempt to send the latest occurrence failed (ms), for giving up. */
  failingSince?: number;
}

/** The API's limit on an Event message is generous; long ones are useless in `kubectl get events`. */
const MAX_MESSAGE = 1024;

export class EventRecorder {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Set<Entry>();
  private worker: Promise<void> | undefined;
  private failing = false;
  private readonly retry = new Set<Entry>();
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs: number;
  private disabledLogged = false;
  private readonly timeoutMs: number;
  private readonly now: () => Date;
  /** Requests made (tests and debugging). */
  requests = 0;

  constructor(private readonly opts: EventRecorderOptions) {
    this.timeoutMs = opts.timeoutMs ?? 5000;
    this.retryDelayMs = opts.retryDelayMs ?? 5000;
    this.now = opts.now ?? (() => new Date());
  }

  /** Records an Event on `ref`; returns at once, never throws. */
  emit(ref: ObjectReference, type: EventType, reason: string, message: string): void {
    try {
      const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message;
      const key = JSON.stringify([ref.kind, ref.namespace, ref.name, ref.uid ?? '', ref.fieldPath ?? '', type, reason, text]);
      const at = this.now().toISOString();
      let e = this.entries.get(key);
      if (e) {
        e.count++;
        e.lastTimestamp = at;
        // a new occurrence: its own time to be sent, whatever became of the ones before
        e.failingSince = undefined;
        this.entries.delete(key); // most recently used last
      } else {
        if (this.pending.size >= (this.opts.maxPending ?? 64)) {
          this.opts.log.warn({ reason, object: `${ref.kind}/${ref.name}` }, 'too many Kubernetes Events waiting to be sent; dropping one');
          return;
        }
        e = { ref, type, reason, message: text, firstTimestamp: at, lastTimestamp: at, count: 1 };
      }
      this.entries.set(key, e);
      while (this.entries.size > (this.opts.cacheSize ?? 256)) {
        const [oldest, old] = this.entries.entries().next().value as [string, Entry];
        if (this.pending.has(old) || this.retry.has(old)) break;
        this.entries.delete(oldest);
      }
      this.retry.delete(e);
      this.pending.add(e);
      this.worker ??= this.drain().finally(() => (this.worker = undefined));
    } catch (err) {
      this.opts.log.warn({ err: (err as Error).message }, 'cannot record a Kubernetes Event');
    }
  }

  /** Waits until everything emitted so far was sent (or failed), at most `timeoutMs`. */
  async flush(timeoutMs = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      (async () => {
        while (this.worker) await this.worker;
      })(),
      new Promise<void>((r) => (timer = setTimeout(r, timeoutMs))),
    ]);
    clearTimeout(timer);
  }

  private async drain(): Promise<void> {
    while (this.pending.size) {
      const e = this.pending.values().next().value as Entry;
      this.pending.delete(e);
      const endpoint = await Promise.resolve()
        .then(() => this.opts.endpoint())
        .catch((err: unknown) => {
          this.opts.log.warn({ err: (err as Error).message }, 'no API server for Kubernetes Events');
          return undefined;
        });
      if (!endpoint) {
        if (!this.disabledLogged) this.opts.log.info('Kubernetes Events are off: no API server configured');
        this.disabledLogged = true;
        continue;
      }
      await this.send(endpoint, e);
    }
  }

  private async send(endpoint: ApiEndpoint, e: Entry): Promise<void> {
    const count = e.count;
    const ns = encodeURIComponent(e.ref.namespace);
    try {
      if (e.name) {
        const r = await this.request(endpoint, 'PATCH', `/api/v1/namespaces/${ns}/events/${encodeURIComponent(e.name)}`, { count, lastTimestamp: e.lastTimestamp });
        // Events expire (an hour by default): start a new one.
        if (r === 404) e.name = undefined;
        else this.check(r, e);
      }
      if (!e.name) {
        const name = `${e.ref.name}.${(BigInt(this.now().getTime()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`;
        const r = await this.request(endpoint, 'POST', `/api/v1/namespaces/${ns}/events`, this.body(e, name, count));
        this.check(r, e);
        e.name = name;
      }
      e.failingSince = undefined;
      this.retryDelayMs = this.opts.retryDelayMs ?? 5000;
      if (this.failing) this.opts.log.info('Kubernetes Events are sent again');
      this.failing = false;
    } catch (err) {
      if (!this.failing) {
        this.opts.log.warn({ err: (err as Error).message, reason: e.reason }, 'cannot send a Kubernetes Event (the work it reports is not affected); will try again with the next one');
      }
      this.failing = true;
      this.scheduleRetry(e);
    }
  }

  private scheduleRetry(e: Entry): void {
    const now = Date.now();
    e.failingSince ??= now;
    if (now - e.failingSince > (this.opts.giveUpMs ?? 10 * 60_000)) return; // stale news by now
    this.retry.add(e);
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      for (const r of this.retry) this.pending.add(r);
      this.retry.clear();
      if (this.pending.size) this.worker ??= this.drain().finally(() => (this.worker = undefined));
    }, this.retryDelayMs);
    this.retryTimer.unref();
    this.retryDelayMs = Math.min(this.retryDelayMs * 2, 60_000);
  }

  /** Stops retrying (the process is exiting). */
  close(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.retry.clear();
  }

  private check(status: number, e: Entry): void {
    if (status < 200 || status > 299) throw new Error(`HTTP ${status} for Event ${e.reason} on ${e.ref.kind}/${e.ref.name}`);
  }

  private body(e: Entry, name: string, count: number): object {
    const { component, host, instance } = this.opts;
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: e.ref.namespace },
      involvedObject: e.ref,
      type: e.type,
      reason: e.reason,
      message: e.message,
      count,
      firstTimestamp: e.firstTimestamp,
      lastTimestamp: e.lastTimestamp,
      source: { component, ...(host && { host }) },
      reportingComponent: component,
      reportingInstance: instance ?? host ?? '',
    };
  }

  private async request(endpoint: ApiEndpoint, method: 'POST' | 'PATCH', path: string, body: object): Promise<number> {
    this.requests++;
    const url = new URL(endpoint.server.replace(/\/+$/, '') + path);
    const mod = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
    const base = await endpoint.options();
    const text = JSON.stringify(body);
    const options: RequestOptions = {
      ...base,
      method,
      // client-node's options carry an https agent; plain http (tests) needs node's default one
      ...(url.protocol === 'http:' && { agent: undefined }),
      headers: {
        ...(base.headers as Record<string, string> | undefined),
        'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
        'Content-Length': String(Buffer.byteLength(text)),
        Accept: 'application/json',
      },
      timeout: this.timeoutMs,
    };
    return new Promise<number>((resolve, reject) => {
      const req = mod.request(url, options, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`no answer from ${url.host} within ${this.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(text);
    });
  }
}
