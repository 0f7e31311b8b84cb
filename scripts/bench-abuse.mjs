// The abuse client of the bench's abuse line (issue 9): one client that sends, at a fixed rate,
// the questions that cost a server the most: wildcards over every namespace or one namespace, and
// the large answers of a headless service of 1,000 endpoints, with a large EDNS buffer, over UDP
// and over TCP (pipelined on one connection, replies read). Types and EDNS sizes rotate, so a
// server that keys its cache by them gets no help from it.
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import * as dnsPacket from 'dns-packet';
import { BIG, NAMESPACES } from './bench-workloads.mjs';

function questions() {
  const qs = [];
  const sizes = [4096, 4000, 2048, 1400];
  let k = 0;
  for (const type of ['A', 'AAAA', 'SRV']) {
    for (let n = 0; n < NAMESPACES; n++) {
      const size = sizes[k++ % sizes.length];
      qs.push({ name: '*.*.svc.cluster.local', type, size });
      qs.push({ name: `*.ns${n}.svc.cluster.local`, type, size });
      qs.push({ name: `${BIG.name}.${BIG.ns}.svc.cluster.local`, type: type === 'SRV' ? 'A' : type, size });
      qs.push({ name: `_http._tcp.${BIG.name}.${BIG.ns}.svc.cluster.local`, type: 'SRV', size });
    }
  }
  return qs;
}

/** Starts sending; `stop()` ends it and returns what was sent and received. */
export async function startAbuse(port, rate = 100) {
  const qs = questions();
  const stats = { sent: 0, udpSent: 0, tcpSent: 0, udpReplies: 0, tcpReplies: 0, truncated: 0, maxUdpBytes: 0, maxTcpBytes: 0, tcpErrors: 0 };
  const udp = createSocket('udp4');
  udp.on('message', (m) => {
    stats.udpReplies++;
    stats.maxUdpBytes = Math.max(stats.maxUdpBytes, m.length);
    if (m.length > 2 && m[2] & 0x02) stats.truncated++;
  });
  udp.on('error', () => {});
  await new Promise((r) => udp.bind(0, '127.0.0.1', r));

  let tcp;
  let pending = Buffer.alloc(0);
  const openTcp = () => {
    tcp = connect(port, '127.0.0.1');
    tcp.setNoDelay(true);
    tcp.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const len = pending.readUInt16BE(0);
        stats.tcpReplies++;
        stats.maxTcpBytes = Math.max(stats.maxTcpBytes, len);
        pending = pending.subarray(2 + len);
      }
    });
    // the server may close an abusive connection: count it and open another
    tcp.on('error', () => {});
    tcp.on('close', () => {
      if (stopped) return;
      stats.tcpErrors++;
      pending = Buffer.alloc(0);
      setTimeout(openTcp, 100);
    });
  };
  let stopped = false;
  openTcp();

  let i = 0;
  const send = () => {
    const q = qs[i % qs.length];
    const overTcp = (i >> 1) & 1; // UDP, UDP, TCP, TCP, ...: both transports see every question
    const msg = dnsPacket.encode({
      type: 'query',
      id: i & 0xffff,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ name: q.name, type: q.type, class: 'IN' }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: q.size }],
    });
    i++;
    stats.sent++;
    if (overTcp) {
      if (tcp.writable) {
        const len = Buffer.alloc(2);
        len.writeUInt16BE(msg.length);
        tcp.write(Buffer.concat([len, msg]));
        stats.tcpSent++;
      }
    } else {
      udp.send(msg, port, '127.0.0.1');
      stats.udpSent++;
    }
  };
  // paced against the clock, not the timer: a late tick sends what it owes
  const t0 = performance.now();
  const timer = setInterval(() => {
    const owed = Math.floor(((performance.now() - t0) / 1000) * rate) - stats.sent;
    for (let k = 0; k < owed; k++) send();
  }, 10);

  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await new Promise((r) => setTimeout(r, 500)); // replies still in flight
      tcp.destroy();
      udp.close();
      return stats;
    },
  };
}
