// The HTTP surface on :10054, path for path as the original's Go ServeMux: exact paths only,
// Go's "404 page not found" for anything else, any method.
import { Buffer } from 'node:buffer';
import express, { type Express, type Response } from 'express';
import type { Registry } from 'prom-client';
import { type HealthBody, healthJson } from './health.js';

export interface HttpDeps {
  metricsPath: string;
  registry: Registry;
  /** The health of probe `label`, or undefined when there is no such probe. */
  health(label: string): HealthBody | undefined;
  now?: () => Date;
}

const HEALTHCHECK_PREFIX = '/healthcheck/';
const TEXT = 'text/plain; charset=utf-8';

// Headers set by hand: express's send() would add a charset to application/json, which the
// original does not send.
function reply(res: Response, status: number, contentType: string, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

export function createApp(deps: HttpDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(async (req, res) => {
    const path = req.path;
    try {
      if (path === deps.metricsPath) {
        const text = await deps.registry.metrics();
        reply(res, 200, deps.registry.contentType, text);
        return;
      }
      if (path === '/healthz') {
        reply(res, 200, TEXT, `ok (${goTime(deps.now?.() ?? new Date())})\n`);
        return;
      }
      if (path.startsWith(HEALTHCHECK_PREFIX)) {
        const body = deps.health(path.slice(HEALTHCHECK_PREFIX.length));
        if (body) {
          reply(res, body.IsOk ? 200 : 503, 'application/json', healthJson(body));
          return;
        }
      }
      reply(res, 404, TEXT, '404 page not found\n');
    } catch (e) {
      reply(res, 500, TEXT, `${(e as Error).message}\n`);
    }
  });
  return app;
}

/** Go's time.Time.String() in UTC (without the monotonic part): `2026-11-21 23:56:03.153 +0000 UTC`. */
export function goTime(d: Date): string {
  return `${d.toISOString().replace('T', ' ').replace('Z', '')} +0000 UTC`;
}
