// A junk flood: malformed queries are answered FORMERR within a budget per second and dropped
// beyond it, counted either way, while well-formed queries keep their answers.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { test } from 'node:test';
import { buildQuery, datas, query } from '@kube-dns/dns-client';
import { Zone } from '../src/records/zone.js';
import { clusterIP } from './resolve-fixtures.js';
import { startStack } from './server-stack.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a junk flood: FORMERR within N a second, the rest dropped and counted, real queries answered', async (t) => {
  const zone = new Zone();
  zone.setService(clusterIP('default', 'web', ['10.0.0.5']));
  const s = await startStack({ zone, handler: { malformedRepliesPerSecond: 50 } });
  t.after(s.stop);

  const junk = Buffer.from(buildQuery({ name: 'web.default.svc.cluster.local', type: 'A' }).subarray(0, 12));
  junk.writeUInt16BE(0, 4); // no question: FORMERR
  const sock = createSocket('udp4');
  t.after(() => sock.close());
  let replies = 0;
  let formerr = 0;
  sock.on('message', (m) => {
    replies++;
    if ((m.readUInt16BE(2) & 0xf) === 1) formerr++;
  });
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', r));
  const SENT = 400;
  const t0 = performance.now();
  for (let i = 0; i < SENT; i++) {
    junk.writeUInt16BE(i, 0);
    sock.send(junk, s.server.port, '127.0.0.1');
    if (i % 50 === 49) await sleep(0);
  }
  sock.send(Buffer.from([0xde]), s.server.port, '127.0.0.1'); // not even an ID: never answered
  // a real client in the middle of the flood is answered
  const real = await query(s.server, { name: 'web.default.svc.cluster.local', type: 'A' });
  assert.deepEqual(datas(real.packet.answers), ['10.0.0.5']);
  const sendMs = performance.now() - t0;
  await sleep(300);
  t.diagnostic(`${SENT} malformed queries sent in ${sendMs.toFixed(0)} ms: ${replies} FORMERR replies`);
  // the budget is a token bucket (server/reply-budget.ts): a tenth of a second's worth at once
  // (5), then 50 a second over however long the flood took to send and answer
  const most = 5 + Math.ceil((50 * (sendMs + 300)) / 1000);
  assert.ok(formerr >= 5 && formerr <= most, `${formerr} FORMERR replies for ${SENT} malformed queries (budget 50/s: 5 to ${most} in ${(sendMs + 300).toFixed(0)} ms)`);
  assert.equal(replies, formerr, 'every reply was a FORMERR');
  assert.equal(s.handler.malformed.replied, formerr);
  assert.equal(s.handler.malformed.dropped, SENT + 1 - formerr, 'the rest dropped, the ID-less packet included');

  const text = await s.metrics.registry.metrics();
  assert.match(text, new RegExp(`^kubedns_dns_malformed_queries_total\\{action="replied"\\} ${formerr}$`, 'm'));
  assert.match(text, new RegExp(`^kubedns_dns_malformed_queries_total\\{action="dropped"\\} ${SENT + 1 - formerr}$`, 'm'));

  // the bucket refills: a malformed query is answered again
  await sleep(1000);
  const before = formerr;
  junk.writeUInt16BE(4242, 0);
  sock.send(junk, s.server.port, '127.0.0.1');
  for (let i = 0; i < 100 && formerr === before; i++) await sleep(20);
  assert.equal(formerr, before + 1, 'FORMERR again once the bucket has refilled');
});
