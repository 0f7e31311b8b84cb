// The bench's ceiling: the least a Node UDP server can do per query, parse the question and answer
// it with one fixed A record (10.0.0.1, TTL 30). CommonJS so that each place that answers as the
// ceiling loads the same code: the ceiling's own process (bench.mjs), and the variants of
// scripts/bench-tail.mjs (the ceiling with a busy-wait per query, and kube-dns's process with its
// DNS listener answering as the ceiling does, through scripts/bench-tail-preload.cjs).
'use strict';

/** The reply to query bytes `m`, or undefined for a packet too short to hold a question. */
function ceilingAnswer(m) {
  if (m.length < 12) return undefined;
  let o = 12;
  while (o < m.length && m[o] !== 0) o += m[o] + 1;
  o += 5; // root label, type, class
  if (o > m.length) return undefined;
  const b = Buffer.allocUnsafe(o + 16);
  m.copy(b, 0, 0, o);
  b[2] = 0x84 | (m[2] & 1); b[3] = 0x80; // QR AA RD, RA
  b.writeUInt16BE(1, 4); b.writeUInt32BE(0x00010000, 6); b.writeUInt16BE(0, 10);
  b.writeUInt32BE(0xc00c0001, o); b.writeUInt32BE(0x00010000, o + 4); // name ptr, A, IN, TTL
  b.writeUInt32BE(0x001e0004, o + 8); b.writeUInt32BE(0x0a000001, o + 12); // TTL 30, 10.0.0.1
  return b;
}

/**
 * A handler that spends `us` microseconds of CPU (a busy-wait) and then answers as the ceiling:
 * a server that costs what kube-dns costs per query but does none of its work (0: the ceiling).
 */
function ceilingHandler(us = 0) {
  if (!(us > 0)) return ceilingAnswer;
  const { performance } = require('node:perf_hooks');
  const ms = us / 1000;
  return (m) => {
    const t0 = performance.now();
    while (performance.now() - t0 < ms);
    return ceilingAnswer(m);
  };
}

/**
 * The ceiling as a program for `node -e` (argv[1]: the port; "ready" on stderr once bound). It sends
 * as kube-dns's listener does (packages/kube-dns/src/server/udp.ts): the reply address is handed
 * back by a synchronous lookup instead of dns.lookup's regular expression and next tick, about 13%
 * of its qps. A ceiling without that would be one kube-dns could beat by the trick alone.
 */
function ceilingProgram(busyUs = 0) {
  return `
const answer = require(${JSON.stringify(__filename)}).ceilingHandler(${Number(busyUs) || 0});
const s = require('node:dgram').createSocket({ type: 'udp4', recvBufferSize: 4 * 1024 * 1024, // as kube-dns's
  lookup: (address, family, callback) => callback(null, address, family) });
s.on('message', (m, r) => {
  const b = answer(m);
  if (b) s.send(b, r.port, r.address);
});
s.bind(Number(process.argv[1]), '127.0.0.1', () => process.stderr.write('ready'));`;
}

module.exports = { ceilingAnswer, ceilingHandler, ceilingProgram };
