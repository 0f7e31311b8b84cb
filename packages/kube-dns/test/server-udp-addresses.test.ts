// UDP on every local address (a wildcard --dns-bind-address): which addresses, and addresses
// that come and go, over real loopback sockets. listen-dual-stack.test.ts runs the binary with
// several addresses in a network namespace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { silentLogger } from '@kube-dns/config';
import { buildQuery, exchange } from '@kube-dns/dns-client';
import { localAddresses, UdpEveryAddress } from '../src/server/udp-addresses.js';

test('local addresses: both families, a link-local one with its interface, none of kube-ipvs0', () => {
  const v4 = (address: string) => ({ address, netmask: '255.0.0.0', family: 'IPv4' as const, mac: '', internal: false, cidr: null });
  const v6 = (address: string, scopeid = 0) => ({ address, netmask: 'ffff::', family: 'IPv6' as const, mac: '', internal: false, cidr: null, scopeid });
  assert.deepEqual(
    localAddresses({
      lo: [v4('127.0.0.1'), v6('::1')],
      eth0: [v4('10.244.1.5'), v6('fd00::5'), v6('fe80::a8c1:abff:fe12:3456', 2)],
      'kube-ipvs0': [v4('10.96.0.1'), v4('10.96.0.10')],
      eth1: [v4('10.244.1.5')], // the same address twice: one socket
    }),
    ['127.0.0.1', '::1', '10.244.1.5', 'fd00::5', 'fe80::a8c1:abff:fe12:3456%eth0'],
  );
});

test('every address gets its socket on one port; addresses that appear are served, those that go are closed', async (t) => {
  let addresses = ['127.0.0.1'];
  const handle = (msg: Buffer) => {
    const reply = Buffer.from(msg);
    reply[2] = 0x81;
    return reply;
  };
  const udp = new UdpEveryAddress({ handle }, silentLogger(), { rescanMs: 60_000, addresses: () => addresses });
  t.after(() => udp.close(0));
  const port = await udp.listen(0);
  const answers = async (host: string) => {
    try {
      await exchange({ host, port }, buildQuery({ name: 'x.cluster.local', type: 'A' }), 'udp', 500);
      return true;
    } catch {
      return false;
    }
  };
  assert.deepEqual([await answers('127.0.0.1'), await answers('::1')], [true, false]);

  addresses = ['127.0.0.1', '::1'];
  await udp.rescan();
  assert.deepEqual(udp.bound, ['127.0.0.1', '::1']);
  assert.deepEqual([await answers('127.0.0.1'), await answers('::1')], [true, true], 'a new address on the same port');

  addresses = ['::1'];
  await udp.rescan();
  assert.deepEqual([await answers('127.0.0.1'), await answers('::1')], [false, true], 'a gone address is closed');
  // the port is free again on the closed address
  const s = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.bind(port, '127.0.0.1', () => resolve());
  });
  s.close();
});

test('an address that cannot be bound (IPv6 still tentative, or gone) does not stop the start; a port in use does', async (t) => {
  let addresses = ['127.0.0.1', '192.0.2.77']; // TEST-NET-1: not on this host, EADDRNOTAVAIL
  const udp = new UdpEveryAddress({ handle: () => undefined }, silentLogger(), { rescanMs: 60_000, addresses: () => addresses });
  t.after(() => udp.close(0));
  const port = await udp.listen(0);
  assert.deepEqual(udp.bound, ['127.0.0.1']);
  addresses = ['127.0.0.1'];
  await udp.rescan();
  assert.deepEqual(udp.bound, ['127.0.0.1']);

  const taken = new UdpEveryAddress({ handle: () => undefined }, silentLogger(), { rescanMs: 60_000, addresses: () => ['127.0.0.1'] });
  await assert.rejects(taken.listen(port), /EADDRINUSE/);
});

test('with ipv6Optional an IPv6 address whose port is held is skipped at start, and served soon after it is freed', async (t) => {
  // something else holds [::1]:port (UDP), as another process might on a hostNetwork node
  const holder = createSocket({ type: 'udp6', ipv6Only: true });
  const port = await new Promise<number>((resolve) => holder.bind(0, '::1', () => resolve(holder.address().port)));
  const strict = new UdpEveryAddress({ handle: () => undefined }, silentLogger(), { rescanMs: 60_000, addresses: () => ['127.0.0.1', '::1'] });
  await assert.rejects(strict.listen(port), /EADDRINUSE/, 'without it (an explicit ::) the start fails');

  const handle = (msg: Buffer) => {
    const reply = Buffer.from(msg);
    reply[2] = 0x81;
    return reply;
  };
  const udp = new UdpEveryAddress({ handle }, silentLogger(), { rescanMs: 60_000, addresses: () => ['127.0.0.1', '::1'], ipv6Optional: true });
  t.after(() => udp.close(0));
  assert.equal(await udp.listen(port), port);
  assert.deepEqual(udp.bound, ['127.0.0.1']);
  holder.close();
  // retried every 250 ms at first, not only at the (here one-minute) rescan
  const t0 = Date.now();
  while (udp.bound.length < 2 && Date.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(udp.bound, ['127.0.0.1', '::1']);
  await exchange({ host: '::1', port }, buildQuery({ name: 'x.cluster.local', type: 'A' }), 'udp', 1000);
});

test('a rescan that cannot list the addresses keeps serving and tries again; close during a rescan leaves nothing bound', async () => {
  let addresses: () => string[] = () => ['127.0.0.1'];
  const udp = new UdpEveryAddress({ handle: () => undefined }, silentLogger(), { rescanMs: 60_000, addresses: () => addresses() });
  const port = await udp.listen(0);
  addresses = () => {
    throw new Error('uv_interface_addresses returned Unknown system error 24');
  };
  await udp.rescan(); // resolves: the timer calls it, an exception would end the process
  assert.deepEqual(udp.bound, ['127.0.0.1']);
  addresses = () => ['127.0.0.1', '::1'];
  const scan = udp.rescan();
  await udp.close(0); // lands while the rescan binds ::1
  await scan;
  assert.deepEqual(udp.bound, []);
  // both addresses are free again
  for (const [type, host] of [['udp4', '127.0.0.1'], ['udp6', '::1']] as const) {
    const s = createSocket(type);
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.bind(port, host, () => resolve());
    });
    s.close();
  }
});
