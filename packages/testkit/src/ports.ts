// Free loopback ports, free on both UDP and TCP (DNS servers bind both).
import { createSocket } from 'node:dgram';
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

/** A port that is free for TCP and UDP on `host` (default 127.0.0.1) right now. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await tryTcp(0, host);
    if (port && (await tryUdp(port, host))) return port;
  }
  throw new Error('no free port found');
}
