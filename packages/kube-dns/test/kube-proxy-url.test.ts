// A kubeconfig whose cluster has a `proxy-url` (an API server reached through a corporate proxy):
// client-node then connects through a SOCKS proxy (socks-proxy-agent) or an HTTP CONNECT proxy
// (hpagent). The shipped bundle loads both agents only on first use (scripts/bundle.mjs), so these
// run the binary itself and check that it syncs through each proxy and answers from what it synced.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { datas, query } from '@kube-dns/dns-client';
import { clusterIPService, freePort, startFakeApiServer, tempDir } from '@kube-dns/testkit';

const BIN = fileURLToPath(new URL('../../bin/kube-dns.js', import.meta.url));

/** Where a proxy was asked to connect to, as "host:port", in order. */
type Proxy = { port: number; targets: string[]; close: () => Promise<void> };

function listen(server: Server, sockets: Set<Socket>, targets: string[]): Promise<Proxy> {
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as { port: number }).port,
        targets,
        close: () => {
          for (const s of sockets) s.destroy();
          return new Promise((r) => server.close(() => r()));
        },
      }),
    ),
  );
}

/** Joins the client to host:port once the proxy's handshake is done; `ok` is the proxy's reply. */
function tunnel(client: Socket, rest: Buffer, host: string, port: number, ok: Buffer, sockets: Set<Socket>): void {
  const upstream = connect(port, host, () => {
    client.write(ok);
    if (rest.length > 0) upstream.write(rest);
    client.pipe(upstream).pipe(client);
  });
  sockets.add(upstream);
  upstream.on('close', () => sockets.delete(upstream));
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
}

/** A SOCKS5 proxy (RFC 1928): no authentication, CONNECT to an IPv4 address or a domain name. */
function socks5Proxy(): Promise<Proxy> {
  const targets: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    let buf = Buffer.alloc(0);
    let greeted = false;
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!greeted) {
        if (buf.length < 2 || buf.length < 2 + buf[1]!) return;
        // not SOCKS 5: refused, so kube-dns never becomes ready and the test says so (an assert
        // thrown in this callback would crash the test process instead of failing the test)
        if (buf[0] !== 5) return void client.destroy();
        buf = buf.subarray(2 + buf[1]!);
        greeted = true;
        client.write(Buffer.from([5, 0])); // no authentication
      }
      if (buf.length < 5) return;
      const atyp = buf[3]!;
      const addrLen = atyp === 1 ? 4 : atyp === 3 ? 1 + buf[4]! : -1;
      if (addrLen < 0 || buf[1] !== 1) return void client.end(Buffer.from([5, 7, 0, 1, 0, 0, 0, 0, 0, 0]));
      if (buf.length < 4 + addrLen + 2) return;
      const host = atyp === 1 ? [...buf.subarray(4, 8)].join('.') : buf.subarray(5, 4 + addrLen).toString('latin1');
      const port = buf.readUInt16BE(4 + addrLen);
      targets.push(`${host}:${port}`);
      client.off('data', onData);
      tunnel(client, buf.subarray(4 + addrLen + 2), host, port, Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]), sockets);
    };
    client.on('data', onData);
  });
  return listen(server, sockets, targets);
}

/** An HTTP proxy that only tunnels (CONNECT host:port), as hpagent asks for http and https alike. */
function connectProxy(): Promise<Proxy> {
  const targets: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      client.off('data', onData);
      const m = /^CONNECT ([^\s:]+):(\d+) HTTP\/1\.[01]\r\n/.exec(buf.subarray(0, end).toString('latin1'));
      if (!m) return void client.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
      targets.push(`${m[1]}:${m[2]}`);
      tunnel(client, buf.subarray(end + 4), m[1]!, Number(m[2]), Buffer.from('HTTP/1.1 200 Connection established\r\n\r\n'), sockets);
    };
    client.on('data', onData);
  });
  return listen(server, sockets, targets);
}

async function syncsThrough(t: TestContext, proxyUrl: (p: Proxy) => string, startProxy: () => Promise<Proxy>, tls: boolean) {
  const api = await startFakeApiServer({ tls });
  t.after(() => api.close());
  api.upsert('services', clusterIPService('default', 'web', ['10.0.0.80']));
  const proxy = await startProxy();
  t.after(() => proxy.close());
  // the fake server's kubeconfig, its cluster given the proxy
  const config = JSON.parse(await readFile(api.kubeconfigPath, 'utf8')) as { clusters: { cluster: Record<string, unknown> }[] };
  config.clusters[0]!.cluster['proxy-url'] = proxyUrl(proxy);
  const dir = await tempDir('kube-proxy-url-');
  t.after(() => dir.cleanup());
  const kubeconfig = join(dir.path, 'kubeconfig');
  await writeFile(kubeconfig, JSON.stringify(config));

  const [dnsPort, healthz] = [await freePort(), await freePort()];
  const child = spawn(
    process.execPath,
    [BIN, '--dns-bind-address=127.0.0.1', `--dns-port=${dnsPort}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthz}`, `--kubecfg-file=${kubeconfig}`],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, PROMETHEUS_PORT: String(await freePort()) } },
  );
  let stderr = '';
  child.stderr.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  t.after(() => child.kill('SIGKILL'));
  const end = Date.now() + 20_000;
  while ((await fetch(`http://127.0.0.1:${healthz}/readiness`).then((r) => r.status, () => 0)) !== 200) {
    assert.ok(Date.now() < end && child.exitCode === null, `kube-dns became ready through the proxy; its stderr: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const r = await query({ host: '127.0.0.1', port: dnsPort }, { name: 'web.default.svc.cluster.local', type: 'A' });
  assert.deepEqual(datas(r.packet.answers), ['10.0.0.80']);
  // kube-dns asked the proxy for the API server, and for nothing else
  assert.ok(proxy.targets.length >= 1, 'the proxy tunnelled the API connections');
  for (const target of proxy.targets) assert.equal(target, `127.0.0.1:${api.port}`);
}

test('proxy-url socks5://: kube-dns syncs through a SOCKS proxy', async (t) => {
  await syncsThrough(t, (p) => `socks5://127.0.0.1:${p.port}`, socks5Proxy, false);
});

test('proxy-url http://: kube-dns syncs through an HTTP CONNECT proxy, to an http and an https API server', async (t) => {
  await syncsThrough(t, (p) => `http://127.0.0.1:${p.port}`, connectProxy, false);
  await syncsThrough(t, (p) => `http://127.0.0.1:${p.port}`, connectProxy, true);
});
