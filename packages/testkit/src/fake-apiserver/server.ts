// A fake kube-apiserver over real HTTP(S), for tests: the one stand-in of this project. It speaks
// the protocol @kubernetes/client-node (and client-go) use, so the code under test runs unmodified:
//   GET /api/v1[/namespaces/<ns>]/{services,pods,configmaps,events}[/<name>], GET /api/v1/namespaces[/<name>]
//   POST to a namespaced collection (create), PATCH with a merge patch on an object (writes.ts):
//     what the Event recorders do; tests read the Events back with list('events')
//   GET /apis/discovery.k8s.io/v1[/namespaces/<ns>]/endpointslices[/<name>]
//   list: metadata.resourceVersion; limit + continue (consistent snapshot; expired token → 410);
//     resourceVersion as kube-apiserver reads it: unset = the latest, "0" = any (here: the latest),
//     N without limit = not older than N, N with limit = exactly N (compacted → 410); N ahead of
//     the server → 504 "Too large resource version" after waiting for it (lists and watches)
//   ?watch=true&resourceVersion=N[&allowWatchBookmarks=true][&timeoutSeconds=S]: JSON lines,
//     replayed from a bounded history then live; RV older than the history → ERROR 410 event
//   labelSelector on lists and watches (a watch sees an object moving out as DELETED, in as ADDED);
//   fieldSelector is ignored.
//   Authorization: Bearer <token>, else 401.
// Tests drive objects with upsert/remove and inject faults through `faults`.
import { Buffer } from 'node:buffer';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { kubeconfigYaml } from './kubeconfig.js';
import { parseResourcePath, type ParsedPath, type ResourceName } from './resources.js';
import { continueExpired, listTooOld, status, tooLargeResourceVersion, type KubeStatus } from './status.js';
import { ObjectStore, type KubeObject } from './store.js';
import { selfSignedCert } from './tls.js';
import { WatchStream } from './watch-stream.js';
import { labelMatcher, type LabelMatcher } from './label-selector.js';
import { handleWrite } from './writes.js';

/**
 * How often kube-apiserver sends a BOOKMARK to a watch that allows them when nothing else happens:
 * its watch cache's bookmark frequency, one minute. A long-running script (the demo, the benches)
 * passes it as bookmarkIntervalMs so that a quiet resource looks to kube-dns as it does in a
 * cluster; without bookmarks, kube-dns abandons a watch silent for 180 s and relists.
 */
export const APISERVER_BOOKMARK_INTERVAL_MS = 60_000;

export interface FakeApiServerOptions {
  /** Bearer token clients must send; random by default. */
  token?: string;
  /** Events kept for watch replay; a watch from before them gets 410. Default 1000. */
  historySize?: number;
  /**
   * Send BOOKMARK events this often to watches that allow them; 0 (default) = only via
   * faults.bookmark(), so that a test decides when one comes (APISERVER_BOOKMARK_INTERVAL_MS is
   * kube-apiserver's).
   */
  bookmarkIntervalMs?: number;
  /** Serve HTTPS with a fresh self-signed certificate (needs the openssl CLI); the kubeconfig carries the CA. */
  tls?: boolean;
  /**
   * How long a list or watch from a resourceVersion ahead of the server waits for it before the
   * 504 "Too large resource version". Default 3000 (kube-apiserver's watch cache).
   */
  tooLargeWaitMs?: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  resource?: ResourceName;
  watch: boolean;
  /** HTTP status sent (200 for an accepted watch, even if it then carries an ERROR event). */
  status: number;
  /** Date.now() when it arrived. */
  at: number;
  /** The bearer token it carried ('' without one). */
  token: string;
}

export interface FailureFilter {
  /** Only watch requests (true) or only non-watch requests (false). */
  watch?: boolean;
  resource?: ResourceName;
  /** Only list requests for a later page (true: with a continue token) or only first pages (false). */
  continue?: boolean;
}

export interface FakeApiServerFaults {
  /** Ends every open watch: cleanly by default (like a timeout), or by resetting the connection. */
  dropWatches(opts?: { abrupt?: boolean; resource?: ResourceName }): number;
  /**
   * The next `n` matching requests get `status` with a Status body instead of an answer; with
   * `retryAfterSeconds`, a Retry-After header too (as kube-apiserver's 429s and 503s carry).
   */
  failRequests(n: number, status?: number, filter?: FailureFilter, retryAfterSeconds?: number): void;
  /**
   * The next `n` matching requests are read and never answered (no status, no headers, the
   * connection left open): a wedged API server or a proxy in front of it. close() cuts them.
   */
  hangRequests(n: number, filter?: FailureFilter): void;
  /** Open watches (of one resource, or all) stay open but send nothing more: no events, no bookmarks, no end. */
  stallWatches(resource?: ResourceName): number;
  /**
   * A new bearer token is required from now on (the old one gets 401), as when a projected
   * service-account token expires. Watches already open stay open, as on a real server.
   */
  rotateToken(newToken: string): void;
  /** TLS only: serve a fresh self-signed certificate from now on; returns its CA PEM. */
  rotateCertificate(): Promise<string>;
  /** Forgets the event history and list snapshots: watches from any earlier RV get an ERROR 410 event. */
  compactHistory(): void;
  /**
   * etcd restored from a backup taken at resourceVersion `rv` (without --bump-revision): every
   * later change is undone, the next write reuses rv + 1, and every watch is cut (the API
   * servers restart). Clients that saw later versions now ask for ones the server has not reached.
   */
  restoreBackup(rv: number): void;
  /** Invalidates every outstanding continue token (next page → 410 Expired). */
  expireContinueTokens(): void;
  /** Sends a BOOKMARK now on every watch that allows bookmarks. */
  bookmark(): void;
  /** Server down: listener closed, connections cut; clients get "connection refused". */
  pause(): Promise<void>;
  /** Back on the same port with the same state (objects, resourceVersion, history). */
  resume(): Promise<void>;
  /** pause() then resume(). */
  restart(): Promise<void>;
}

export interface FakeApiServer {
  readonly url: string;
  readonly port: number;
  /** The bearer token accepted now (changes with faults.rotateToken). */
  readonly token: string;
  /** TLS only: the CA that verifies the certificate served now. */
  readonly caPem: string | undefined;
  /** A kubeconfig file for this server (removed by close()). */
  readonly kubeconfigPath: string;
  /** The same kubeconfig, loaded. */
  kubeConfig(): KubeConfig;
  /** Creates or replaces an object (ADDED / MODIFIED); returns the stored JSON. */
  upsert(resource: ResourceName, obj: object): KubeObject;
  /** Deletes an object (DELETED); false when it did not exist. */
  remove(resource: ResourceName, namespace: string, name: string): boolean;
  get(resource: ResourceName, namespace: string, name: string): KubeObject | undefined;
  list(resource: ResourceName, namespace?: string): KubeObject[];
  /** The current global resourceVersion. */
  readonly resourceVersion: number;
  /** Every request received, in order (tests may clear it with `requests.length = 0`). */
  readonly requests: RecordedRequest[];
  /** Open watch streams, for one resource or all. */
  activeWatches(resource?: ResourceName): number;
  /** Resolves once at least `count` watches on `resource` are open. */
  waitForWatches(resource: ResourceName, count?: number, timeoutMs?: number): Promise<void>;
  readonly faults: FakeApiServerFaults;
  close(): Promise<void>;
}

const OPEN_PATHS = new Set(['/healthz', '/livez', '/readyz', '/version']);

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function stripTypeMeta(o: KubeObject): KubeObject {
  // Items of a real list carry no kind/apiVersion (the list has them).
  const { kind: _k, apiVersion: _a, ...rest } = o;
  return rest;
}

interface ContinueToken {
  id: string;
  offset: number;
  resource: string;
  namespace: string;
}

function encodeContinue(t: ContinueToken): string {
  return Buffer.from(JSON.stringify(t)).toString('base64url');
}

function decodeContinue(s: string): ContinueToken | undefined {
  try {
    const t = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as ContinueToken;
    return typeof t.id === 'string' && Number.isInteger(t.offset) ? t : undefined;
  } catch {
    return undefined;
  }
}

export async function startFakeApiServer(opts: FakeApiServerOptions = {}): Promise<FakeApiServer> {
  let token = opts.token ?? randomBytes(16).toString('hex');
  const store = new ObjectStore(opts.historySize ?? 1000);
  const requests: RecordedRequest[] = [];
  const watches = new Set<WatchStream>();
  const sockets = new Set<Socket>();
  const failures: { remaining: number; status: number; filter: FailureFilter; retryAfterSeconds?: number }[] = [];
  const hangs: { remaining: number; filter: FailureFilter }[] = [];
  const watchWaiters = new Set<() => void>();
  const dir = await mkdtemp(join(tmpdir(), 'fake-apiserver-'));

  let tlsMaterial = opts.tls ? await selfSignedCert(dir) : undefined;

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const parsed = parseResourcePath(url.pathname);
    const isWatch = query['watch'] === 'true' || query['watch'] === '1';
    const rec: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query,
      watch: isWatch,
      status: 0,
      at: Date.now(),
      token: /^Bearer (.*)$/.exec(req.headers.authorization ?? '')?.[1] ?? '',
      ...(parsed && { resource: parsed.resource.name }),
    };
    requests.push(rec);
    const reply = (code: number, body: unknown): void => {
      rec.status = code;
      sendJson(res, code, body);
    };
    const fail = (s: KubeStatus): void => reply(s.code, s);

    if (!OPEN_PATHS.has(url.pathname) && req.headers.authorization !== `Bearer ${token}`) {
      return fail(status(401, 'Unauthorized'));
    }
    const matchesFilter = (filter: FailureFilter): boolean =>
      (filter.watch === undefined || filter.watch === isWatch) &&
      (filter.resource === undefined || filter.resource === parsed?.resource.name) &&
      (filter.continue === undefined || filter.continue === (!isWatch && !!query['continue']));
    const hang = hangs.find((h) => h.remaining > 0 && matchesFilter(h.filter));
    if (hang) {
      hang.remaining--;
      return; // never answered; the socket stays open until the client or close() cuts it
    }
    const injected = failures.find((f) => f.remaining > 0 && matchesFilter(f.filter));
    if (injected) {
      injected.remaining--;
      if (injected.retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(injected.retryAfterSeconds));
      // a 410 on a continue token says what kube-apiserver says
      return fail(injected.status === 410 && query['continue'] ? continueExpired() : status(injected.status, `injected failure (HTTP ${injected.status})`));
    }
    if (url.pathname === '/version') {
      return reply(200, { major: '1', minor: '34', gitVersion: 'v1.34.0-fake', platform: 'linux/amd64' });
    }
    if (OPEN_PATHS.has(url.pathname)) {
      rec.status = 200;
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok');
      return;
    }
    if (!parsed) return fail(status(404, 'the server could not find the requested resource'));
    if (req.method === 'POST' || req.method === 'PATCH') {
      void handleWrite(req, parsed, store, reply).catch((e: unknown) => fail(status(500, String(e))));
      return;
    }
    if (req.method !== 'GET') return fail(status(405, `the fake API server serves GET, POST and PATCH, not ${req.method}`));

    if (parsed.name !== undefined) return getOne(parsed, reply);
    let matches: LabelMatcher;
    try {
      matches = labelMatcher(query['labelSelector']);
    } catch (e) {
      return fail(status(400, `unable to parse requirement: ${(e as Error).message}`));
    }
    const served = isWatch ? startWatch(parsed, query, rec, res, matches) : list(parsed, query, reply, matches);
    void served.catch((e: unknown) => fail(status(500, String(e))));
  };

  const getOne = (p: ParsedPath, reply: (c: number, b: unknown) => void): void => {
    const o = store.get(p.resource.name, p.resource.clusterScoped ? '' : (p.namespace ?? 'default'), p.name!);
    if (!o) {
      const s = status(404, `${p.resource.name}${p.resource.group ? '.' + p.resource.group : ''} "${p.name}" not found`);
      return reply(404, s);
    }
    reply(200, o);
  };

  /** Whether the store reaches `rv` within tooLargeWaitMs (kube-apiserver's watch cache waits so for a version ahead of it). */
  const reached = async (rv: number): Promise<boolean> => {
    if (store.resourceVersion >= rv) return true;
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        off();
        resolve(ok);
      };
      const timer = setTimeout(() => done(false), opts.tooLargeWaitMs ?? 3000);
      const off = store.subscribe(() => {
        if (store.resourceVersion >= rv) done(true);
      });
    });
  };

  /** The resourceVersion a list or watch asked for: '' and '0' are 0 (the latest; any), undefined when it is no number. */
  const askedVersion = (rvText: string | undefined): number | undefined => {
    if (rvText === undefined || rvText === '' || rvText === '0') return 0;
    return /^\d+$/.test(rvText) ? Number(rvText) : undefined;
  };

  const list = async (p: ParsedPath, query: Record<string, string>, reply: (c: number, b: unknown) => void, matches: LabelMatcher): Promise<void> => {
    const namespace = p.namespace ?? '';
    const limit = Number(query['limit'] ?? '0');
    const paged = Number.isInteger(limit) && limit > 0;
    const asked = askedVersion(query['resourceVersion']);
    if (asked === undefined) return reply(400, status(400, `invalid resourceVersion ${JSON.stringify(query['resourceVersion'])}`));
    let items: KubeObject[];
    let rv: number;
    let offset = 0;
    let snapshotId: string | undefined;
    const cont = query['continue'];
    if (cont) {
      if (asked > 0) return reply(400, status(400, 'specifying resource version is not allowed when using continue'));
      const t = decodeContinue(cont);
      if (!t || t.resource !== p.resource.name || t.namespace !== namespace) {
        return reply(400, status(400, 'continue key is not valid for this request'));
      }
      const snap = store.snapshot(t.id);
      if (!snap) return reply(410, continueExpired());
      ({ items, rv } = snap);
      offset = t.offset;
      snapshotId = t.id;
    } else {
      if (asked > store.resourceVersion && !(await reached(asked))) return reply(504, tooLargeResourceVersion(asked, store.resourceVersion));
      rv = store.resourceVersion;
      let objects = store.list(p.resource.name, p.namespace);
      if (asked > 0 && asked < rv && paged) {
        // N with a limit is an exact read of revision N (etcd), which compaction may have taken
        const then = store.listAt(asked, p.resource.name, p.namespace);
        if (!then) return reply(410, listTooOld());
        objects = then;
        rv = asked;
      }
      items = objects.filter(matches);
    }
    let page = items.slice(offset);
    const metadata: Record<string, unknown> = { resourceVersion: String(rv) };
    if (paged && page.length > limit) {
      page = page.slice(0, limit);
      snapshotId ??= store.saveSnapshot(p.resource.name, namespace, rv, items);
      metadata['continue'] = encodeContinue({ id: snapshotId, offset: offset + limit, resource: p.resource.name, namespace });
      metadata['remainingItemCount'] = items.length - offset - limit;
    } else if (snapshotId) {
      store.dropSnapshot(snapshotId);
    }
    reply(200, { kind: `${p.resource.kind}List`, apiVersion: p.resource.apiVersion, metadata, items: page.map(stripTypeMeta) });
  };

  const startWatch = async (p: ParsedPath, query: Record<string, string>, rec: RecordedRequest, res: ServerResponse, matches: LabelMatcher): Promise<void> => {
    const rvText = query['resourceVersion'];
    const asked = askedVersion(rvText);
    if (asked === undefined) {
      rec.status = 400;
      return sendJson(res, 400, status(400, `invalid resourceVersion ${JSON.stringify(rvText)}`));
    }
    if (asked > store.resourceVersion && !(await reached(asked))) {
      rec.status = 504;
      return sendJson(res, 504, tooLargeResourceVersion(asked, store.resourceVersion));
    }
    const timeout = query['timeoutSeconds'] ? Number(query['timeoutSeconds']) : undefined;
    const w = new WatchStream(
      store,
      {
        resource: p.resource,
        ...(p.namespace !== undefined && { namespace: p.namespace }),
        ...(rvText !== undefined && { resourceVersion: rvText }),
        bookmarks: query['allowWatchBookmarks'] === 'true',
        ...(query['labelSelector'] && { matches }),
        ...(timeout !== undefined && Number.isFinite(timeout) && { timeoutSeconds: timeout }),
      },
      res,
      (closed) => watches.delete(closed),
    );
    rec.status = 200;
    watches.add(w);
    w.start();
    for (const wake of [...watchWaiters]) wake();
  };

  const server: Server = tlsMaterial
    ? createHttpsServer({ cert: tlsMaterial.certPem, key: tlsMaterial.keyPem }, handle)
    : createHttpServer(handle);
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  // Client-side resets are normal here (tests abort watches); they must not crash the test process.
  server.on('clientError', (_e, s) => s.destroy());

  const listen = async (port: number): Promise<number> => {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as { port: number }).port;
  };
  const port = await listen(0);
  const scheme = tlsMaterial ? 'https' : 'http';
  const url = `${scheme}://127.0.0.1:${port}`;
  const kubeconfigPath = join(dir, 'kubeconfig');
  const kubeconfigText = kubeconfigYaml({ server: url, token, ...(tlsMaterial && { caPem: tlsMaterial.certPem }) });
  await writeFile(kubeconfigPath, kubeconfigText);

  const bookmarkAll = (): void => {
    for (const w of watches) w.bookmark();
  };
  const bookmarkTimer =
    opts.bookmarkIntervalMs && opts.bookmarkIntervalMs > 0 ? setInterval(bookmarkAll, opts.bookmarkIntervalMs) : undefined;

  let up = true;
  const goDown = async (): Promise<void> => {
    if (!up) return;
    up = false;
    for (const w of [...watches]) w.destroy();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };

  const faults: FakeApiServerFaults = {
    dropWatches({ abrupt = false, resource } = {}) {
      let n = 0;
      for (const w of [...watches]) {
        if (resource && w.resource !== resource) continue;
        if (abrupt) w.destroy();
        else w.end();
        n++;
      }
      return n;
    },
    failRequests(n, code = 500, filter = {}, retryAfterSeconds) {
      failures.push({ remaining: n, status: code, filter, ...(retryAfterSeconds !== undefined && { retryAfterSeconds }) });
    },
    hangRequests(n, filter = {}) {
      hangs.push({ remaining: n, filter });
    },
    stallWatches(resource) {
      let n = 0;
      for (const w of watches) {
        if (resource && w.resource !== resource) continue;
        w.stall();
        n++;
      }
      return n;
    },
    rotateToken(newToken) {
      token = newToken;
    },
    async rotateCertificate() {
      if (!tlsMaterial) throw new Error('fake-apiserver: rotateCertificate needs tls: true');
      tlsMaterial = await selfSignedCert(await mkdtemp(join(dir, 'cert-')));
      (server as import('node:https').Server).setSecureContext({ cert: tlsMaterial.certPem, key: tlsMaterial.keyPem });
      return tlsMaterial.certPem;
    },
    compactHistory: () => store.compact(),
    restoreBackup(rv) {
      store.rollBack(rv);
      for (const w of [...watches]) w.destroy();
    },
    expireContinueTokens: () => store.expireSnapshots(),
    bookmark: bookmarkAll,
    pause: goDown,
    async resume() {
      if (up) return;
      await listen(port);
      up = true;
    },
    async restart() {
      await faults.pause();
      await faults.resume();
    },
  };

  const activeWatches = (resource?: ResourceName): number =>
    [...watches].filter((w) => resource === undefined || w.resource === resource).length;

  return {
    url,
    port,
    get token() {
      return token;
    },
    get caPem() {
      return tlsMaterial?.certPem;
    },
    kubeconfigPath,
    kubeConfig() {
      const kc = new KubeConfig();
      kc.loadFromString(kubeconfigText);
      return kc;
    },
    upsert: (resource, obj) => store.upsert(resource, obj),
    remove: (resource, namespace, name) => store.remove(resource, namespace, name),
    get: (resource, namespace, name) => store.get(resource, namespace, name),
    list: (resource, namespace) => store.list(resource, namespace),
    get resourceVersion() {
      return store.resourceVersion;
    },
    requests,
    activeWatches,
    async waitForWatches(resource, count = 1, timeoutMs = 5000) {
      if (activeWatches(resource) >= count) return;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          watchWaiters.delete(check);
          reject(new Error(`fake-apiserver: fewer than ${count} watches on ${resource} after ${timeoutMs} ms (have ${activeWatches(resource)})`));
        }, timeoutMs);
        const check = (): void => {
          if (activeWatches(resource) < count) return;
          clearTimeout(timer);
          watchWaiters.delete(check);
          resolve();
        };
        watchWaiters.add(check);
      });
    },
    faults,
    async close() {
      if (bookmarkTimer) clearInterval(bookmarkTimer);
      await goDown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
