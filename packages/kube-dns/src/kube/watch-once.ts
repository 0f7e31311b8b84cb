// One watch request through client-node's Watch, wrapped so that it always ends exactly once
// with an outcome, can be aborted at any point (even before the server answered), and cannot
// hang forever on a connection that silently died.
import type { Agent } from 'node:http';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { describeError, httpStatusOf, isGone } from './errors.js';

export type WatchOutcome =
  /** The server ended the stream (timeoutSeconds, apiserver restart): resume from the last RV. */
  | { kind: 'closed' }
  /** 410: the RV is too old (HTTP 410 or an ERROR event with a 410 Status): relist. */
  | { kind: 'expired'; message: string }
  /**
   * `http`: the server answered with an error (an HTTP status, an ERROR event), not a transport
   * failure; `status`: the HTTP status the watch request was refused with.
   */
  | { kind: 'error'; message: string; http: boolean; status?: number }
  /** Nothing (no event, no bookmark) for `idleMs`: the stream is wedged somewhere; relist. */
  | { kind: 'idle'; message: string }
  | { kind: 'aborted' };

export interface WatchEventObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string };
  code?: number;
  reason?: string;
  message?: string;
}

export interface WatchOnceOptions {
  kc: KubeConfig;
  path: string;
  resourceVersion: string;
  /** Sent as the watch's labelSelector when set (--labels). */
  labelSelector?: string;
  /** Asks the server to end the watch after this long (client-go picks 5-10 min at random). */
  timeoutSeconds: number;
  /** Give up on a watch that is still open this long after timeoutSeconds. */
  graceMs: number;
  /**
   * Give up on a watch that delivered nothing (no event, no bookmark, not even its response
   * headers) for this long. kube-apiserver sends a bookmark about once a minute to watches that
   * allow them, so several missing in a row means the stream is dead without the TCP connection
   * saying so (a half-open connection, a wedged proxy or apiserver).
   */
  idleMs: number;
  onEvent(type: string, obj: WatchEventObject): void;
  /** The server accepted the watch (HTTP 200). */
  onEstablished(): void;
}

export interface RunningWatch {
  done: Promise<WatchOutcome>;
  abort(): void;
}

function refused(err: unknown): WatchOutcome {
  const status = httpStatusOf(err);
  return { kind: 'error', message: describeError(err), http: status !== undefined, ...(status !== undefined && { status }) };
}

export function watchOnce(o: WatchOnceOptions): RunningWatch {
  let finished = false;
  let controller: AbortController | undefined;
  let agent: Agent | undefined;
  let resolveDone!: (w: WatchOutcome) => void;
  const done = new Promise<WatchOutcome>((r) => (resolveDone = r));

  const finish = (outcome: WatchOutcome): void => {
    if (finished) return;
    finished = true;
    clearTimeout(watchdog);
    clearTimeout(idle);
    controller?.abort();
    // Destroying the per-watch agent also cuts a request still waiting for response headers,
    // which the controller (only handed out after the headers) cannot.
    agent?.destroy();
    resolveDone(outcome);
  };

  const watchdog = setTimeout(
    () => finish({ kind: 'error', message: `watch still open ${o.graceMs} ms after its timeoutSeconds=${o.timeoutSeconds}; reconnecting`, http: false }),
    o.timeoutSeconds * 1000 + o.graceMs,
  );

  const onIdle = (): void => finish({ kind: 'idle', message: `no event or bookmark for ${o.idleMs} ms` });
  const idle = setTimeout(onIdle, o.idleMs);
  // re-arming one timer per event would allocate; refresh() restarts the same timer
  const alive = (): void => void idle.refresh();

  // client-node creates a fresh agent per watch inside applyToFetchOptions: keep a handle on it.
  const kc = Object.create(o.kc) as KubeConfig;
  kc.applyToFetchOptions = async (opts) => {
    const init = await o.kc.applyToFetchOptions(opts);
    agent = init.agent as Agent | undefined;
    if (finished) agent?.destroy();
    return init;
  };

  new Watch(kc)
    .watch(
      o.path,
      { resourceVersion: o.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: o.timeoutSeconds, ...(o.labelSelector && { labelSelector: o.labelSelector }) },
      (type: string, obj: WatchEventObject) => {
        if (finished) return;
        alive();
        if (type === 'ERROR') {
          const msg = `watch ERROR event: ${obj?.code ?? '?'} ${obj?.reason ?? ''}: ${obj?.message ?? ''}`;
          finish(obj?.code === 410 ? { kind: 'expired', message: msg } : { kind: 'error', message: msg, http: true });
          return;
        }
        o.onEvent(type, obj);
      },
      (err: unknown) => {
        if (err === null || err === undefined) finish({ kind: 'closed' });
        else if (isGone(err)) finish({ kind: 'expired', message: describeError(err) });
        else finish(refused(err));
      },
    )
    .then(
      (ctl) => {
        controller = ctl;
        if (finished) ctl.abort();
        else {
          alive();
          o.onEstablished();
        }
      },
      (err: unknown) => finish(refused(err)),
    );

  return { done, abort: () => finish({ kind: 'aborted' }) };
}
