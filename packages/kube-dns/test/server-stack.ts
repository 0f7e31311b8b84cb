// The real query path over real sockets: Zone + resolve + DnsHandler + UDP/TCP listeners +
// metrics, as app.ts wires them, minus the API server. For tests of what reaches the wire.
import { silentLogger } from '@kube-dns/config';
import { Forwarder } from '../src/forward/forwarder.js';
import { KubeDnsMetrics, registerMalformedMetrics } from '../src/http/metrics.js';
import { Zone } from '../src/records/zone.js';
import { resolve } from '../src/resolve/resolve.js';
import type { ResolveOptions } from '../src/resolve/types.js';
import { DnsHandler, type HandlerOptions } from '../src/server/handler.js';
import { TcpListener, type TcpOptions } from '../src/server/tcp.js';
import { UdpListener } from '../src/server/udp.js';
import { OPTS } from './resolve-fixtures.js';

export interface StackOptions {
  resolve?: Partial<ResolveOptions>;
  handler?: Partial<HandlerOptions>;
  tcp?: TcpOptions;
  upstreamPort?: number;
  zone?: Zone;
}

export async function startStack(o: StackOptions = {}) {
  const log = silentLogger();
  const zone = o.zone ?? new Zone();
  const opts: ResolveOptions = { ...OPTS, wildcards: false, ...o.resolve };
  const forwarder = new Forwarder({ log, timeoutMs: 1000 });
  if (o.upstreamPort) forwarder.setUpstreams([{ host: '127.0.0.1', port: o.upstreamPort, family: 4, raw: '' }]);
  const metrics = new KubeDnsMetrics();
  const handler = new DnsHandler({
    zone,
    resolve: (name, qtype) => resolve(zone, name, qtype, opts),
    forwarder,
    isSynced: () => true,
    log,
    observer: metrics,
    ...o.handler,
  });
  registerMalformedMetrics(metrics.registry, handler.malformed);
  for (let attempt = 0; ; attempt++) {
    // the UDP port picked may be taken on TCP by a parallel test's outgoing connection: retry
    const udp = new UdpListener(handler, log);
    const tcp = new TcpListener(handler, log, o.tcp);
    const port = await udp.listen('127.0.0.1', 0);
    try {
      await tcp.listen('127.0.0.1', port);
    } catch (e) {
      await udp.close(0);
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt > 20) throw e;
      continue;
    }
    return {
      zone,
      handler,
      metrics,
      tcp,
      server: { host: '127.0.0.1', port },
      stop: async () => {
        await udp.close(500);
        await tcp.close(500);
      },
    };
  }
}
