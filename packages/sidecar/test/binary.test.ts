// The real binary: flag errors, --version, serving, SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import * as dnsPacket from 'dns-packet';
import { WARNING_CODE, freePort, startDnsmasq, startTestDnsServer, warningEmitter, warningProblems } from '@kube-dns/testkit';
import { getHealth, scrape, value, waitFor } from './helpers.js';

const BIN = fileURLToPath(new URL('../../bin/sidecar.js', import.meta.url));

function run(args: string[], env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
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

test('an empty --dnsmasq-addr reads the dnsmasq on this host, as the original (Go dials ":53" locally)', async (t) => {
  // before: the empty name went round a look-up loop of its own in microtasks, which froze the
  // event loop (no /metrics, no probes, SIGTERM ignored) and grew until V8 ran out of memory
  const dm = await startDnsmasq(['--cache-size=1337']);
  t.after(() => dm.stop());
  const port = await freePort();
  const p = run(['--prometheus-addr=127.0.0.1', `--prometheus-port=${port}`, '--dnsmasq-addr=', `--dnsmasq-port=${dm.port}`, '--dnsmasq-poll-interval-ms=200']);
  t.after(() => p.child.kill('SIGKILL'));
  // the counter is there at 0 before the first poll: wait for the poll's reading
  const size = await waitFor(
    'kubedns_dnsmasq_max_size from the local dnsmasq',
    async () => {
      const v = value((await scrape(port)).families, 'kubedns_dnsmasq_max_size');
      return v !== undefined && v > 0 ? v : undefined;
    },
    15_000,
    100,
  );
  assert.equal(size, 1337);
  p.child.kill('SIGTERM');
  assert.deepEqual(((r) => [r.code, r.signal])(await p.exited), [0, null]);
});

test('IPv6 addresses in brackets, the spelling the original takes ("[::1]" + ":53"), for --dnsmasq-addr and --prometheus-addr', async (t) => {
  const dm = await startDnsmasq(['--cache-size=1337'], { host: '::1' });
  t.after(() => dm.stop());
  const port = await freePort('::1');
  const p = run(['--prometheus-addr=[::1]', `--prometheus-port=${port}`, '--dnsmasq-addr=[::1]', `--dnsmasq-port=${dm.port}`, '--dnsmasq-poll-interval-ms=200']);
  t.after(() => p.child.kill('SIGKILL'));
  const metric = async (name: string) => {
    const text = await (await fetch(`http://[::1]:${port}/metrics`)).text();
    return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  };
  const size = await waitFor('kubedns_dnsmasq_max_size from the dnsmasq on [::1]', async () => (await metric('kubedns_dnsmasq_max_size')) || undefined, 15_000, 100);
  assert.equal(size, 1337);
  assert.equal(await metric('kubedns_dnsmasq_errors'), 0);
  p.child.kill('SIGTERM');
  assert.deepEqual(((r) => [r.code, r.signal])(await p.exited), [0, null]);
});

test('SIGTERM exits within about a second, however slowly dnsmasq answers the statistics poll', async (t) => {
  // a dnsmasq that answers each CHAOS question after 1.9 s, inside the poll's 2 s timeout: the
  // poll's six questions in a row used to hold the exit for up to 12 s
  const slow = createSocket('udp4');
  const pending = new Set<NodeJS.Timeout>();
  slow.on('message', (msg, from) => {
    const q = dnsPacket.decode(msg);
    const reply = dnsPacket.encode({ type: 'response', id: q.id, questions: q.questions, answers: [{ name: q.questions![0]!.name, type: 'TXT', class: 'CH', ttl: 0, data: '1' }] });
    const timer = setTimeout(() => (pending.delete(timer), slow.send(reply, from.port, from.address)), 1900);
    pending.add(timer);
  });
  await new Promise<void>((r) => slow.bind(0, '127.0.0.1', () => r()));
  // the replies still waiting go with the socket (a send on a closed socket throws)
  t.after(() => (pending.forEach((x) => clearTimeout(x)), slow.close()));
  const port = await freePort();
  // an interval of 2 s or more: the poll's timeout is then the full 2 s
  const p = run(['--prometheus-addr=127.0.0.1', `--prometheus-port=${port}`, '--dnsmasq-addr=127.0.0.1', `--dnsmasq-port=${slow.address().port}`, '--dnsmasq-poll-interval-ms=5000']);
  t.after(() => p.child.kill('SIGKILL'));
  await waitFor('the sidecar to serve /metrics', async () => (await scrape(port)).families.size > 0, 15_000, 100);
  await new Promise((r) => setTimeout(r, 2500)); // into a poll
  const sent = performance.now();
  p.child.kill('SIGTERM');
  const r = await p.exited;
  const took = performance.now() - sent;
  assert.deepEqual([r.code, r.signal], [0, null]);
  assert.ok(took < 2500, `exited ${took.toFixed(0)} ms after SIGTERM`);
});

test('node\'s process warnings come out as JSON log lines: a deprecation at debug, any other warning at warn', async (t) => {
  const w = await warningEmitter();
  t.after(w.cleanup);
  const p = run(['--prometheus-addr=127.0.0.1', `--prometheus-port=${await freePort()}`, `--dnsmasq-port=${await freePort()}`], w.env);
  t.after(() => p.child.kill('SIGKILL'));
  await waitFor('the warning logged', async () => p.output().stderr.includes(WARNING_CODE) || undefined, 15_000, 100);
  await new Promise((res) => setTimeout(res, 200)); // both warnings' lines
  p.child.kill('SIGTERM');
  const r = await p.exited;
  assert.deepEqual(warningProblems(r.stderr), []);
});
