// /cache's bounds, over real HTTP: a couple of listings at a time (each takes its slices of the
// event loop in turn with DNS), and a reader that stops reading is cut off; methods and paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { Registry } from 'prom-client';
import { silentLogger } from '@kube-dns/config';
import { createHttpApp, listenHttp } from '../src/http/server.js';

/** 24 MB of listing: more than loopback's socket buffers hold for a client that does not read. */
function* bigDump(): Generator<string> {
  yield '[';
  for (let i = 0; i < 400; i++) yield `${i ? ',' : ''}"${'x'.repeat(60_000)}"`;
  yield ']';
}

test('/cache: two listings at a time, the next gets 503 with Retry-After; a reader that stops is cut off and makes room', async (t) => {
  const app = createHttpApp({ isSynced: () => true, dump: bigDump, registry: new Registry(), version: 'test', cacheListings: { max: 2, stalledMs: 1000 } });
  const server: Server = await listenHttp(app, '127.0.0.1', 0, silentLogger(), 'test HTTP');
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  // two clients that ask and never read
  const stalled: Socket[] = [];
  for (let i = 0; i < 2; i++) {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => undefined);
    await new Promise((r) => s.once('connect', r));
    s.pause();
    s.write('GET /cache HTTP/1.1\r\nHost: x\r\n\r\n');
    stalled.push(s);
  }
  t.after(() => stalled.forEach((s) => s.destroy()));
  await new Promise((r) => setTimeout(r, 300));
  const busy = await fetch(`http://127.0.0.1:${port}/cache`);
  assert.equal(busy.status, 503);
  assert.equal(busy.headers.get('retry-after'), '5');
  await busy.text();
  // cut off once they have not read for a second (stalledMs here): /cache is free again
  let ok = busy;
  for (let i = 0; i < 50 && ok.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 100));
    ok = await fetch(`http://127.0.0.1:${port}/cache`);
    if (ok.status !== 200) await ok.text();
  }
  assert.equal(ok.status, 200);
  assert.equal((JSON.parse(await ok.text()) as string[]).length, 400);
});

test('any method on the endpoints, as the original; HEAD /cache writes no listing; an unknown path is a plain 404', async (t) => {
  let listings = 0;
  const dump = function* (): Generator<string> {
    listings++;
    yield '[]';
  };
  const app = createHttpApp({ isSynced: () => true, dump, registry: new Registry(), version: 'test' });
  const server: Server = await listenHttp(app, '127.0.0.1', 0, silentLogger(), 'test HTTP');
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const post = await fetch(`${url}/readiness`, { method: 'POST' });
  assert.deepEqual([post.status, await post.text()], [200, 'ok\n']);
  const head = await fetch(`${url}/cache`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(listings, 0, 'HEAD built no listing');
  const nope = await fetch(`${url}/nope`);
  assert.deepEqual([nope.status, nope.headers.get('content-type'), await nope.text()], [404, 'text/plain; charset=utf-8', '404 page not found\n']);
});
