// The real binary: flag errors, --version, serving, SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, startTestDnsServer } from '@kube-dns/testkit';
import { getHealth, scrape, waitFor } from './helpers.js';

const BIN = fileURLToPath(new URL('../../bin/sidecar.js', import.meta.url));

function run(args: string[]) {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) =>
    // 'close' comes after the exit and after stdout/stderr are drained.
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, exited, output: () => ({ stdout, stderr }) };
}

test('bad --probe values exit 2 with the reason on stderr', async () => {
  const cases: [string, RegExp][] = [
    ['--probe=dnsmasq,[::1]:53', /invalid value "dnsmasq,\[::1\]:53" for --probe: invalid format to --probe/],
    ['--probe=dn$m@s#,127.0.0.1,x.local', /label must be of format/],
    ['--probe=a,127.0.0.1,x.local,0.5', /invalid syntax/],
    ['--probe=a,127.0.0.1,x.local,5,BogusType', /invalid type for DNS: BogusType/],
  ];
  await Promise.all(
    cases.map(async ([arg, want]) => {
      const r = await run([arg]).exited;
      assert.equal(r.code, 2, arg);
      assert.match(r.stderr, want, arg);
      assert.match(r.stderr, /^sidecar: /);
    }),
  );
});

test('--version prints the version the original way', async () => {
  const r = await run(['--version']).exited;
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^Kube-DNS \d+\.\d+\.\d+\n$/);
});

test('the binary serves health and metrics, and exits 0 on SIGTERM', async (t) => {
  const server = await startTestDnsServer({ answerIp: '10.0.0.10' });
  t.after(() => server.close());
  const port = await freePort();
  const p = run([
    '--v=2',
    '--logtostderr',
    '--prometheus-addr=127.0.0.1',
    `--prometheus-port=${port}`,
    `--dnsmasq-port=${await freePort()}`,
    `--probe=kubedns,127.0.0.1:${server.port},kubernetes.default.svc.cluster.local,1,A`,
  ]);
  t.after(() => p.child.kill('SIGKILL'));
  await waitFor('/healthcheck/kubedns to answer 200', async () => (await getHealth(port, 'kubedns')).status === 200, 15_000, 100);
  const { families } = await scrape(port);
  assert.ok(families.has('kubedns_probe_kubedns_latency_ms'));
  assert.deepEqual(server.questions[0], { name: 'kubernetes.default.svc.cluster.local', type: 'A', class: 'IN', transport: 'udp' });

  p.child.kill('SIGTERM');
  const r = await p.exited;
  assert.deepEqual([r.code, r.signal], [0, null]);
  const logs = r.stderr.trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
  assert.ok(logs.some((l) => l.msg === 'sidecar started'));
  assert.ok(logs.some((l) => l.msg === 'stopping'));
});
