// HTTP of kube-dns: /readiness, /healthz, /cache and /metrics. The original serves all of them
// on both the healthz port and PROMETHEUS_PORT; so do we.
import { Buffer } from 'node:buffer';
import type { Server, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Writable } from 'node:stream';
import express from 'express';
import type { Registry } from 'prom-client';
import { formatHostPort, httpListenHost, limitHttpConnections, type Logger } from '@kube-dns/config';

/** Connections at once and idle time of the HTTP ports (defaults: @kube-dns/config's http-limits; tests shorten them). */
export type HttpLimits = Parameters<typeof limitHttpConnections>[1];

export interface HttpSources {
  isSynced: () => boolean;
  /** Why not ready, for the 503 body. */
  notReadyReason?: () => string;
  /** The records as JSON (the original's /cache), in pieces: see streamPieces. */
  dump: () => Iterable<string>;
  /**
   * Whether the records are whole (the first sync done): before, /cache is 503 as /readiness is,
   * rather than a part of the zone that DNS does not serve (cluster names get SERVFAIL then).
   * The original registers /cache once synced. Default: always.
   */
  dumpReady?: () => boolean;
  registry: Registry;
  metricsPath?: string;
  version: string;
  /** /cache listings written at once (default 2) and how long one may wait for its reader (default 30 s). */
  cacheListings?: { max?: number; stalledMs?: number };
}

/**
 * Writes a whole body with its type. Not express's res.type()/res.send()/res.json(): they look the
 * type's charset up in mime-types, which the bundle loads on first use only (scripts/bundle.mjs)
 * and which parses mime-db's 2,000 types into tables that stay in memory (1.3 MB), for types we
 * spell out in full here.
 */
function reply(res: ServerResponse, status: number, type: string, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

const TEXT = 'text/plain; charset=utf-8';

export function createHttpApp(src: HttpSources): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // Any method, as the original's Go handlers take it; anything else is Go's plain 404 (the
  // sidecar's too), not express's HTML page.
  app.all('/readiness', (_req, res) => {
    if (src.isSynced()) reply(res, 200, TEXT, 'ok\n');
    else reply(res, 503, TEXT, `not ready: ${src.notReadyReason?.() ?? 'waiting for the first sync with the API server'}\n`);
  });
  app.all('/healthz', (_req, res) => {
    reply(res, 200, TEXT, `ok (${new Date().toISOString()})\n`);
  });
  // Each listing takes its slices of the event loop in turn with DNS: K at once took K slices
  // per turn (100 of them stalled DNS 300 ms). So at most a couple at a time, and a reader that
  // stops reading for stalledMs is cut off, or 200 of them held the port for good.
  const maxListings = src.cacheListings?.max ?? 2;
  const stalledMs = src.cacheListings?.stalledMs ?? 30_000;
  let listings = 0;
  app.all('/cache', (req, res) => {
    if (src.dumpReady && !src.dumpReady()) {
      res.setHeader('Retry-After', '5');
      reply(res, 503, TEXT, `no records yet: ${src.notReadyReason?.() ?? 'waiting for the first sync with the API server'}\n`);
      return;
    }
    if (req.method === 'HEAD') {
      // the headers alone: not a whole listing written for nothing
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end();
      return;
    }
    if (listings >= maxListings) {
      res.setHeader('Retry-After', '5');
      reply(res, 503, TEXT, `busy: ${listings} /cache listings are being written; try again\n`);
      return;
    }
    listings++;
    res.setHeader('Content-Type', 'application/json; charset=utf-8');
    streamPieces(src.dump(), res, stalledMs)
      .catch((e: unknown) => res.destroy(e as Error))
      .finally(() => listings--);
  });
  app.all('/version', (_req, res) => {
    reply(res, 200, 'application/json; charset=utf-8', JSON.stringify({ version: src.version }));
  });
  app.all(src.metricsPath ?? '/metrics', async (_req, res) => {
    try {
      reply(res, 200, src.registry.contentType, await src.registry.metrics());
    } catch (e) {
      reply(res, 500, TEXT, String(e));
    }
  });
  app.use((_req, res) => reply(res, 404, TEXT, '404 page not found\n'));
  return app;
}

/** Work done per turn of the event loop before DNS queries get their turn. */
const SLICE_MS = 4;
/** Bytes gathered before a write: fewer, larger chunks. */
const WRITE_BYTES = 64 * 1024;

/**
 * Writes a large body taken from `pieces` without holding the event loop: it takes pieces for at
 * most SLICE_MS, writes them, waits for 'drain' when the socket buffer is full (a slow reader costs
 * one buffer of memory, not the whole body), then yields with setImmediate so that UDP/TCP reads
 * run in between. Stops when the client goes away, and closes it when it has not taken a buffer
 * for `stalledMs`.
 */
async function streamPieces(pieces: Iterable<string>, res: Writable, stalledMs: number): Promise<void> {
  let gone = false;
  const onClose = (): void => {
    gone = true;
  };
  res.once('close', onClose);
  const it = pieces[Symbol.iterator]();
  try {
    for (;;) {
      const until = performance.now() + SLICE_MS;
      let chunk = '';
      let done = false;
      while (chunk.length < WRITE_BYTES && performance.now() < until) {
        const r = it.next();
        if (r.done) {
          done = true;
          break;
        }
        chunk += r.value;
      }
      if (gone) return;
      const more = chunk.length === 0 || res.write(chunk);
      if (done) {
        res.end();
        return;
      }
      if (!more) {
        await new Promise<void>((r) => {
          const go = (): void => {
            clearTimeout(stalled);
            res.off('drain', go);
            res.off('close', go);
            r();
          };
          const stalled = setTimeout(() => {
            res.destroy();
            go();
          }, stalledMs);
          res.on('drain', go);
          res.on('close', go);
        });
      }
      // Always through setImmediate: 'drain' can fire from a nextTick right after a write that
      // the kernel took at once, and chaining on it would never give the poll phase (DNS) a turn.
      await new Promise((r) => setImmediate(r));
    }
  } finally {
    it.return?.();
    res.off('close', onClose);
  }
}

export function listenHttp(app: express.Express, host: string, port: number, log: Logger, what: string, limits?: HttpLimits): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen({ port, host: httpListenHost(host) });
    limitHttpConnections(server, limits);
    server.once('listening', () => {
      log.info({ address: server.address() }, `${what} listening`);
      resolve(server);
    });
    server.once('error', (e) => reject(new Error(`cannot listen for ${what} on ${formatHostPort(host, port)}: ${e.message}`)));
  });
}
