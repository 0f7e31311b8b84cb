// HTTP of kube-dns: /readiness, /healthz, /cache and /metrics. The original serves all of them
// on both the healthz port and PROMETHEUS_PORT; so do we.
import type { Server } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Writable } from 'node:stream';
import express from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from '@kube-dns/config';

export interface HttpSources {
  isSynced: () => boolean;
  /** Why not ready, for the 503 body. */
  notReadyReason?: () => string;
  /** The records as JSON (the original's /cache), in pieces: see streamPieces. */
  dump: () => Iterable<string>;
  registry: Registry;
  metricsPath?: string;
  version: string;
}

export function createHttpApp(src: HttpSources): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/readiness', (_req, res) => {
    if (src.isSynced()) res.type('text/plain').send('ok\n');
    else res.status(503).type('text/plain').send(`not ready: ${src.notReadyReason?.() ?? 'waiting for the first sync with the API server'}\n`);
  });
  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send(`ok (${new Date().toISOString()})\n`);
  });
  app.get('/cache', (_req, res) => {
    res.type('application/json');
    streamPieces(src.dump(), res).catch((e: unknown) => res.destroy(e as Error));
  });
  app.get('/version', (_req, res) => {
    res.json({ version: src.version });
  });
  app.get(src.metricsPath ?? '/metrics', async (_req, res) => {
    try {
      res.type(src.registry.contentType).send(await src.registry.metrics());
    } catch (e) {
      res.status(500).type('text/plain').send(String(e));
    }
  });
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
 * run in between. Stops when the client goes away.
 */
async function streamPieces(pieces: Iterable<string>, res: Writable): Promise<void> {
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
            res.off('drain', go);
            res.off('close', go);
            r();
          };
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

export function listenHttp(app: express.Express, host: string, port: number, log: Logger, what: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('listening', () => {
      log.info({ address: server.address() }, `${what} listening`);
      resolve(server);
    });
    server.once('error', (e) => reject(new Error(`cannot listen for ${what} on ${host}:${port}: ${e.message}`)));
  });
}
