// Free loopback ports, free on both UDP and TCP (DNS servers bind both).
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

function tryTcp(port: number, host: string): Promise<number | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(undefined));
    srv.listen(port, host, () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => resolve(p));
    });
  });
}

function tryUdp(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    s.once('error', () => resolve(false));
    s.bind(port, host, () => s.close(() => resolve(true)));
  });
}

/** The kernel's range for outgoing connections' local ports. */
function ephemeralRange(): [number, number] {
  try {
    const [lo, hi] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (lo && hi) return [lo, hi];
  } catch {
    /* not Linux */
  }
  return [32768, 60999];
}

/**
 * A port that is free for TCP and UDP on `host` (default 127.0.0.1) right now, chosen below the
 * ephemeral range: a port from that range can be taken by any outgoing connection (of a test
 * running in parallel) between this check and the moment a server binds it.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const [lo] = ephemeralRange();
  const floor = 10_000;
  for (let attempt = 0; attempt < 200; attempt++) {
    const candidate = lo > floor + 1000 ? floor + Math.floor(Math.random() * (lo - floor)) : 0;
    const port = await tryTcp(candidate, host);
    if (port && (await tryUdp(port, host))) return port;
  }
  throw new Error('no free port found');
}
