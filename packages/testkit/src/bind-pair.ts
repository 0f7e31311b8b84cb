// A DNS server needs the same port on UDP and TCP. With port 0 the UDP bind picks a number that
// TCP may not have free (an outgoing connection of a parallel test can hold it as its ephemeral
// port): then start over with a new number instead of failing the test.
import type { Socket } from 'node:dgram';
import type { Server } from 'node:net';

export async function bindUdpAndTcp(host: string, port: number | undefined, makeUdp: () => Socket, tcp: Server): Promise<{ udp: Socket; port: number }> {
  for (let attempt = 0; ; attempt++) {
    const udp = makeUdp();
    const p = await new Promise<number>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(port ?? 0, host, () => {
        udp.off('error', reject);
        resolve(udp.address().port);
      });
    });
    try {
      await new Promise<void>((resolve, reject) => {
        tcp.once('error', reject);
        tcp.listen(p, host, () => {
          tcp.off('error', reject);
          resolve();
        });
      });
      return { udp, port: p };
    } catch (e) {
      await new Promise<void>((r) => udp.close(() => r()));
      if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port !== undefined || attempt >= 20) throw e;
    }
  }
}
