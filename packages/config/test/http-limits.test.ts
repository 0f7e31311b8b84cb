// The binaries' HTTP servers against idle connections (http-limits.ts): any pod can open them, and
// 17,000 silent ones took the sidecar past its heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { limitHttpConnections } from '../src/index.js';

/** A connection that sends nothing; resolves once connected, with when it closed (if it did). */
async function silent(port: number): Promise<{ sock: Socket; closed: Promise<number> }> {
  const sock = connect({ host: '127.0.0.1', port });
  const closed = new Promise<number>((resolve) => sock.once('close', () => resolve(Date.now())));
  sock.on('error', () => undefined);
  await once(sock, 'connect');
  return { sock, closed };
}

test('silent connections are closed once idle, and no more than the cap are held at once; requests still get through', async (t) => {
  const server = createServer((_req, res) => res.end('ok'));
  limitHttpConnections(server, { maxConnections: 5, idleMs: 400 });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const started = Date.now();
  const conns = await Promise.all(Array.from({ length: 8 }, () => silent(port)));
  t.after(() => conns.forEach((c) => c.sock.destroy()));
  await new Promise((r) => setTimeout(r, 100));
  const held = await new Promise<number>((resolve) => server.getConnections((_e, n) => resolve(n)));
  assert.equal(held, 5, 'the cap: the connections past it are closed at once');
  const times = await Promise.all(conns.map((c) => c.closed));
  const idleClosed = times.filter((at) => at - started >= 350);
  assert.equal(idleClosed.length, 5, 'the held ones closed after the idle time');
  assert.ok(Math.max(...times) - started < 3000, `closed within a few idle periods (${Math.max(...times) - started} ms)`);
  const r = await fetch(`http://127.0.0.1:${port}/`);
  assert.equal(await r.text(), 'ok');
});
