// Loaded into kube-dns with `--require` by scripts/bench-tail.mjs (never in production): kube-dns's
// DNS listener answers every query as the bench's ceiling does, and everything else of the process
// runs as usual (the API watches, the HTTP servers, the metrics, the timers, the heap settler, the
// bundle's heap and code). A tail this process shares with the ceiling is the process's; a tail
// only kube-dns has is the work of answering.
//
// KUBEDNS_TAIL_BUSY_US (set by bench-tail.mjs for its kd-process+busy server): busy-wait that many
// microseconds before answering, so the process spends the CPU kube-dns's answering does without
// doing its work (what the CPU alone costs the tail, in kube-dns's own process).
//
// The listener is the one socket kube-dns creates with reuseAddr false and a lookup of its own
// (packages/kube-dns/src/server/udp.ts); the forwarder's and the NOTIFY sockets are left alone.
'use strict';
const dgram = require('node:dgram');
const answer = require('./bench-ceiling.cjs').ceilingHandler(Number(process.env.KUBEDNS_TAIL_BUSY_US) || 0);

const createSocket = dgram.createSocket;
dgram.createSocket = function (opts, ...rest) {
  const s = createSocket.call(this, opts, ...rest);
  if (!opts || typeof opts !== 'object' || typeof opts.lookup !== 'function' || opts.reuseAddr !== false) return s;
  const on = s.on;
  s.on = function (event, listener) {
    if (event !== 'message') return on.call(this, event, listener);
    return on.call(this, event, (m, r) => {
      const b = answer(m);
      if (b) s.send(b, r.port, r.address);
    });
  };
  return s;
};
