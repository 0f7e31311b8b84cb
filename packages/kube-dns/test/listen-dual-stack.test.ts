// The default bind address 0.0.0.0 means every address, IPv6 included, as the original's Go
// listeners take it: in an IPv6 cluster the pod IP is IPv6, and the kubelet's probes and the
// clients come over IPv6. The binaries run with their default binds inside a network namespace
// of their own (only loopback in it), so the wildcard binds touch no address of the machine;
// a client in the same namespace asks over 127.0.0.1 and ::1.
// Needs root (ip netns), as CI runs the suite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const KUBE_DNS = fileURLToPath(new URL('../../bin/kube-dns.js', import.meta.url));
const SIDECAR = fileURLToPath(new URL('../../../sidecar/bin/sidecar.js', import.meta.url));

// Run inside the namespace: one A question (x.cluster.local) over UDP and over TCP to each
// address, and HTTP GETs; prints what answered.
const CLIENT = `
const dgram = require('node:dgram'), net = require('node:net');
const q = Buffer.from('abcd01000001000000000000' + '0178' + '07636c7573746572' + '056c6f63616c00' + '00010001', 'hex');
// 'reply' when the answer came back from the address asked (as a connected socket requires)
const udp = (host, from) => new Promise((res) => {
  const s = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
  const t = setTimeout(() => { s.close(); res('timeout'); }, 3000);
  s.on('error', (e) => { clearTimeout(t); s.close(); res(e.code); });
  s.on('message', (m, r) => { clearTimeout(t); s.close(); res(m.readUInt16BE(0) !== 0xabcd ? 'wrong id' : r.address !== host ? 'reply from ' + r.address : 'reply'); });
  s.bind({ address: from }, () => s.send(q, 10053, host));
});
const tcp = (host) => new Promise((res) => {
  const s = net.connect(10053, host);
  const t = setTimeout(() => { s.destroy(); res('timeout'); }, 3000);
  s.on('error', (e) => { clearTimeout(t); res(e.code); });
  s.on('connect', () => { const l = Buffer.alloc(2); l.writeUInt16BE(q.length); s.write(Buffer.concat([l, q])); });
  s.on('data', (d) => { clearTimeout(t); s.destroy(); res(d.length > 4 && d.readUInt16BE(2) === 0xabcd ? 'reply' : 'wrong id'); });
});
const http = (url) => fetch(url, { signal: AbortSignal.timeout(3000) }).then((r) => 'HTTP', (e) => (e.cause && e.cause.code) || e.name);
(async () => {
  const out = {};
  for (const [kind, to, from] of JSON.parse(process.argv[1])) {
    out[[kind, to, from].filter(Boolean).join(' ')] = kind === 'udp' ? await udp(to, from) : kind === 'tcp' ? await tcp(to) : await http(to);
  }
  console.log(JSON.stringify(out));
})();
`;

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Spawns `cmd` in the namespace; resolves once a line of its output matches `ready`. */
function startIn(ns: string, cmd: string[], ready: RegExp): Promise<ChildProcess> {
  const p = spawn('ip', ['netns', 'exec', ns, ...cmd], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`not ready within 15 s: ${out.slice(-2000)}`)), 15_000);
    const onData = (c: Buffer) => {
      out += c.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve(p);
      }
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', onData);
    p.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code}: ${out.slice(-2000)}`));
    });
  });
}

test('default binds (0.0.0.0): kube-dns answers over IPv4 and IPv6, UDP and TCP; its HTTP ports and the sidecar take IPv6 too', async (t) => {
  const ns = netns(t);
  // no API server in the namespace: DNS and HTTP are served before the first sync all the same
  const kubeDns = await startIn(
    ns,
    ['env', 'PROMETHEUS_PORT=10055', process.execPath, KUBE_DNS, '--dns-port=10053', '--kube-master-url=http://127.0.0.1:1', '--nameservers=127.0.0.1:1'],
    /metrics HTTP listening/, // after DNS and healthz
  );
  t.after(() => kubeDns.kill('SIGKILL'));
  const sidecar = await startIn(ns, [process.execPath, SIDECAR, '--probe=kubedns,127.0.0.1:10053,kubernetes.default.svc.cluster.local,5,A'], /sidecar started/);
  t.after(() => sidecar.kill('SIGKILL'));

  const checks = [
    ['udp', '127.0.0.1'],
    ['tcp', '127.0.0.1'],
    ['udp', '::1'],
    ['tcp', '::1'],
    ['http', 'http://127.0.0.1:8081/healthz'],
    ['http', 'http://[::1]:8081/healthz'],
    ['http', 'http://[::1]:10055/metrics'],
    ['http', 'http://127.0.0.1:10054/metrics'],
    ['http', 'http://[::1]:10054/metrics'],
  ];
  assert.deepEqual(await ask(ns, checks), {
    'udp 127.0.0.1': 'reply',
    'tcp 127.0.0.1': 'reply',
    'udp ::1': 'reply',
    'tcp ::1': 'reply',
    'http http://127.0.0.1:8081/healthz': 'HTTP',
    'http http://[::1]:8081/healthz': 'HTTP',
    'http http://[::1]:10055/metrics': 'HTTP',
    'http http://127.0.0.1:10054/metrics': 'HTTP',
    'http http://[::1]:10054/metrics': 'HTTP',
  });
});

test('default bind on a host with several addresses: a UDP reply leaves from the address asked, on addresses added later too', async (t) => {
  const ns = netns(t);
  ip('netns', 'exec', ns, 'ip', 'addr', 'add', '10.77.0.1/32', 'dev', 'lo');
  ip('netns', 'exec', ns, 'ip', 'addr', 'add', '10.77.0.2/32', 'dev', 'lo');
  const kubeDns = await startIn(ns, [process.execPath, KUBE_DNS, '--dns-port=10053', '--kube-master-url=http://127.0.0.1:1', '--nameservers=127.0.0.1:1'], /serving DNS over UDP and TCP/);
  t.after(() => kubeDns.kill('SIGKILL'));
  // a client on 10.77.0.1 asks 10.77.0.2: the kernel's route back to 10.77.0.1 would pick
  // 10.77.0.1 as the source, which the client (a connected socket) would drop
  assert.deepEqual(await ask(ns, [['udp', '10.77.0.2', '10.77.0.1'], ['udp', '10.77.0.1', '10.77.0.2'], ['tcp', '10.77.0.2']]), {
    'udp 10.77.0.2 10.77.0.1': 'reply',
    'udp 10.77.0.1 10.77.0.2': 'reply',
    'tcp 10.77.0.2': 'reply',
  });
  // an address added while running is served within the rescan (5 s)
  ip('netns', 'exec', ns, 'ip', 'addr', 'add', '10.77.0.3/32', 'dev', 'lo');
  const t0 = Date.now();
  let last: Record<string, string> = {};
  while (Date.now() - t0 < 20_000) {
    last = await ask(ns, [['udp', '10.77.0.3', '10.77.0.1']]);
    if (last['udp 10.77.0.3 10.77.0.1'] === 'reply') break;
    await new Promise((r) => setTimeout(r, 500));
  }
  assert.deepEqual(last, { 'udp 10.77.0.3 10.77.0.1': 'reply' }, 'the new address, from the address asked');
  t.diagnostic(`the added address answered after ${Date.now() - t0} ms`);
});

/** Runs the client in the namespace with `checks`: [kind, to, from?]. */
function ask(ns: string, checks: string[][]): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    execFile('ip', ['netns', 'exec', ns, process.execPath, '-e', CLIENT, JSON.stringify(checks)], { encoding: 'utf8', timeout: 30_000 }, (err, stdout) =>
      err ? reject(err) : resolve(JSON.parse(stdout) as Record<string, string>),
    );
  });
}

/** A network namespace of its own with loopback up, removed after the test. */
function netns(t: { after: (fn: () => unknown) => void }): string {
  if (process.getuid?.() !== 0) throw new Error('this test creates a network namespace: run it as root (CI does)');
  const ns = `kdds${process.pid % 10_000_000}`;
  const remove = () => {
    try {
      ip('netns', 'del', ns);
    } catch {
      // not created
    }
  };
  remove();
  ip('netns', 'add', ns);
  t.after(remove);
  ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
  return ns;
}
