// One watch response: a chunked stream of JSON lines {"type": ..., "object": ...}, as
// kube-apiserver sends them (HTTP 200 first, errors such as 410 come as ERROR events).
import type { ServerResponse } from 'node:http';
import type { KubeObject, ObjectStore, StoredEvent } from './store.js';
import type { ResourceInfo } from './resources.js';
import type { LabelMatcher } from './label-selector.js';
import { tooOldResourceVersion, type KubeStatus } from './status.js';

export interface WatchRequest {
  resource: ResourceInfo;
  namespace?: string;
  /** undefined, '' or '0': start with synthetic ADDED events for every current object. */
  resourceVersion?: string;
  bookmarks: boolean;
  timeoutSeconds?: number;
  /** labelSelector: only matching objects; an object moving in or out is ADDED / DELETED. */
  matches?: LabelMatcher;
}

export class WatchStream {
  private closed = false;
  private unsubscribe: (() => void) | undefined;
  private timeout: NodeJS.Timeout | undefined;
  /** Events up to here were sent; the live feed skips anything at or below it. */
  private sentRv = 0;
  /** A stalled stream stays open and sends nothing more, not even its timeout's end. */
  private stalled = false;

  constructor(
    private readonly store: ObjectStore,
    private readonly req: WatchRequest,
    private readonly res: ServerResponse,
    private readonly onClose: (w: WatchStream) => void,
  ) {}

  get resource(): string {
    return this.req.resource.name;
  }

  get wantsBookmarks(): boolean {
    return this.req.bookmarks;
  }

  start(): void {
    this.res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private' });
    this.res.flushHeaders();
    this.res.on('close', () => this.cleanup());

    const rvText = this.req.resourceVersion;
    if (rvText === undefined || rvText === '' || rvText === '0') {
      this.sentRv = this.store.resourceVersion;
      for (const o of this.store.list(this.req.resource.name, this.req.namespace)) if (this.selected(o)) this.write('ADDED', o);
    } else {
      const rv = Number(rvText);
      const events = this.store.eventsSince(rv, this.req.resource.name, this.req.namespace);
      if (!events) {
        this.writeError(tooOldResourceVersion(rv, this.store.oldestResourceVersion));
        this.end();
        return;
      }
      for (const e of events) this.send(e);
      this.sentRv = Math.max(rv, this.store.resourceVersion);
    }
    this.unsubscribe = this.store.subscribe((e) => this.live(e));
    if (this.req.timeoutSeconds !== undefined && this.req.timeoutSeconds > 0) {
      this.timeout = setTimeout(() => this.end(), this.req.timeoutSeconds * 1000);
    }
  }

  private live(e: StoredEvent): void {
    if (e.rv <= this.sentRv || e.resource !== this.req.resource.name) return;
    if (this.req.namespace !== undefined && e.namespace !== this.req.namespace) return;
    this.sentRv = e.rv;
    this.send(e);
  }

  private selected(o: KubeObject | undefined): boolean {
    return this.req.matches ? this.req.matches(o) : true;
  }

  /** One stored event as this watch sees it through its labelSelector (as kube-apiserver does). */
  private send(e: StoredEvent): void {
    if (!this.req.matches) return this.write(e.type, e.object);
    const now = this.selected(e.object);
    if (e.type !== 'MODIFIED') {
      if (now) this.write(e.type, e.object);
      return;
    }
    const before = this.selected(e.previous);
    if (now) this.write(before ? 'MODIFIED' : 'ADDED', e.object);
    else if (before) this.write('DELETED', e.object);
  }

  /** From now on the stream sends nothing and never ends by itself (a wedged apiserver or proxy). */
  stall(): void {
    this.stalled = true;
    if (this.timeout) clearTimeout(this.timeout);
  }

  private write(type: string, object: KubeObject | KubeStatus): void {
    if (this.closed || this.stalled) return;
    this.res.write(JSON.stringify({ type, object }) + '\n');
  }

  writeError(s: KubeStatus): void {
    this.write('ERROR', s);
  }

  /** A BOOKMARK at the current resourceVersion (only if the client asked for bookmarks). */
  bookmark(): void {
    if (!this.req.bookmarks) return;
    const rv = this.store.resourceVersion;
    this.sentRv = Math.max(this.sentRv, rv);
    this.write('BOOKMARK', {
      kind: this.req.resource.kind,
      apiVersion: this.req.resource.apiVersion,
      metadata: { resourceVersion: String(rv) },
    });
  }

  /** Ends the stream cleanly (what the server does at timeoutSeconds). */
  end(): void {
    if (this.closed) return;
    this.cleanup();
    this.res.end();
  }

  /** Cuts the connection without a clean end (a proxy or node dying). */
  destroy(): void {
    if (this.closed) return;
    this.cleanup();
    this.res.destroy();
  }

  private cleanup(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe?.();
    if (this.timeout) clearTimeout(this.timeout);
    this.onClose(this);
  }
}
