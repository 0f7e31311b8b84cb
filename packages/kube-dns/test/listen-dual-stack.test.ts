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
const udp = (host) => new Promise((res) => {
  const s = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
  const t = setTimeout(() => { s.close(); res('timeout'); }, 3000);
  s.on('error', (e) => { clearTimeout(t); s.close(); res(e.code); });
  s.on('message', (m) => { clearTimeout(t); s.close(); res(m.readUInt16BE(0) === 0xabcd ? 'reply' : 'wrong id'); });
  s.send(q, 10053, host);
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
  for (const h of ['127.0.0.1', '::1']) { out['udp ' + h] = await udp(h); out['tcp ' + h] = await tcp(h); }
  for (const u of ['http://127.0.0.1:8081/healthz', 'http://[::1]:8081/healthz', 'http://[::1]:10055/metrics', 'http://127.0.0.1:10054/metrics', 'http://[::1]:10054/metrics']) out[u] = await http(u);
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

  // no API server in the namespace: DNS and HTTP are served before the first sync all the same
  const kubeDns = await startIn(
    ns,
    ['env', 'PROMETHEUS_PORT=10055', process.execPath, KUBE_DNS, '--dns-port=10053', '--kube-master-url=http://127.0.0.1:1', '--nameservers=127.0.0.1:1'],
    /metrics HTTP listening/, // after DNS and healthz
  );
  t.after(() => kubeDns.kill('SIGKILL'));
  const sidecar = await startIn(ns, [process.execPath, SIDECAR, '--probe=kubedns,127.0.0.1:10053,kubernetes.default.svc.cluster.local,5,A'], /sidecar started/);
  t.after(() => sidecar.kill('SIGKILL'));

  const got = await new Promise<Record<string, string>>((resolve, reject) => {
    execFile('ip', ['netns', 'exec', ns, process.execPath, '-e', CLIENT], { encoding: 'utf8', timeout: 30_000 }, (err, stdout) =>
      err ? reject(err) : resolve(JSON.parse(stdout) as Record<string, string>),
    );
  });
  assert.deepEqual(got, {
    'udp 127.0.0.1': 'reply',
    'tcp 127.0.0.1': 'reply',
    'udp ::1': 'reply',
    'tcp ::1': 'reply',
    'http://127.0.0.1:8081/healthz': 'HTTP',
    'http://[::1]:8081/healthz': 'HTTP',
    'http://[::1]:10055/metrics': 'HTTP',
    'http://127.0.0.1:10054/metrics': 'HTTP',
    'http://[::1]:10054/metrics': 'HTTP',
  });
});
