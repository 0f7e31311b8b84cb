// HTTP of kube-dns: /readiness, /healthz, /cache and /metrics. The original serves all of them
// on both the healthz port and PROMETHEUS_PORT; so do we.
import type { Server } from 'node:http';
import express from 'express';
import type { Registry } from 'prom-client';
import type { Logger } from '@kube-dns/config';

export interface HttpSources {
  isSynced: () => boolean;
  /** Why not ready, for the 503 body. */
  notReadyReason?: () => string;
  /** The records as JSON (the original's /cache). */
  dump: () => unknown;
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
    res.type('application/json').send(JSON.stringify(src.dump(), null, '\t'));
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
