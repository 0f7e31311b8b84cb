// A dnsmasq that is stopped (SIGSTOP) never exits: only asking it something shows it is gone.
// The sidecar's health check (the kubelet's liveness probe of the pod) turns unhealthy after its
// failure threshold (3 probes that each wait out the 2 s timeout), and the nanny's own liveness
// probe kills and restarts dnsmasq.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '@kube-dns/testkit';
import { alive, eventually, loopbackDnsmasqArgs, lookupA, startNanny } from './nanny-harness.js';

const SIDECAR = fileURLToPath(new URL('../../../sidecar/bin/sidecar.js', import.meta.url));

test('SIGSTOP of dnsmasq: the sidecar health turns 503 after 3 failed probes, the nanny restarts dnsmasq, health recovers', async (t) => {
  const nanny = await startNanny(t, {
    config: { hosts: '192.0.2.5 h.example\n' },
    // slower than the sidecar's window, so both reactions are seen
    flags: ['-livenessProbeInterval=1s', '-livenessProbeFailures=12'],
  });
  const stopped = nanny.dnsmasqPid()!;
  t.after(() => {
    if (alive(stopped)) process.kill(stopped, 'SIGKILL');
  });
  const httpPort = await freePort();
  const sidecar = spawn(
    process.execPath,
    [SIDECAR, '--prometheus-addr=127.0.0.1', `--prometheus-port=${httpPort}`, `--dnsmasq-port=${nanny.port}`, `--probe=dnsmasq,127.0.0.1:${nanny.port},h.example,1,A`],
    { stdio: 'ignore' },
  );
  t.after(() => sidecar.kill('SIGKILL'));
  const health = async () => (await fetch(`http://127.0.0.1:${httpPort}/healthcheck/dnsmasq`)).status;
  await eventually(async () => (await health()) === 200, 20_000, 'sidecar healthy');

  const mark = nanny.logs.length;
  process.kill(stopped, 'SIGSTOP');
  const stoppedAt = Date.now();
  const unhealthyAfter = await eventually(async () => (await health()) === 503, 10_000, 'sidecar health 503', 50);
  // 3 failures, each a 2 s timeout, the first after up to an interval; at most 3 rounds of 2 s
  // and a timeout after the last success by age; generous slack for a loaded machine
  assert.ok(unhealthyAfter <= 8000 + 3000, `unhealthy after ${unhealthyAfter} ms (window: 3 failed probes of up to 2 s, or 8 s without a success)`);

  const hung = await nanny.waitForLog((l) => /dnsmasq is hung: 12 liveness probes in a row got no answer/.test(l.msg), 30_000, mark);
  assert.equal(hung.dnsmasqPid, stopped);
  await nanny.waitForLog((l) => l.msg === 'dnsmasq restarted', 5000, mark);
  await eventually(async () => (await lookupA(nanny.port, 'h.example', 300)).ips.join() === '192.0.2.5', 15_000, 'answer from the new dnsmasq', 50);
  const answeringAt = Date.now() - stoppedAt;
  assert.notEqual(nanny.dnsmasqPid(), stopped);
  assert.equal(alive(stopped), false, 'the stopped dnsmasq was killed');
  await eventually(async () => (await health()) === 200, 15_000, 'sidecar healthy again');
  t.diagnostic(
    `SIGSTOP: sidecar 503 after ${unhealthyAfter} ms; nanny killed and restarted dnsmasq, answering again ${answeringAt} ms after the stop (probe every 1 s, 12 misses)`,
  );
});

test('the liveness probe leaves a healthy dnsmasq alone', async (t) => {
  const nanny = await startNanny(t, { config: { hosts: '192.0.2.5 h.example\n' }, flags: ['-livenessProbeInterval=100ms', '-livenessProbeFailures=2'] });
  const pid = nanny.dnsmasqPid()!;
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(nanny.dnsmasqPid(), pid);
  assert.ok(!nanny.logs.some((l) => /missed a liveness probe|hung/.test(l.msg)));
});

test('the probe target comes from the dnsmasq arguments', async () => {
  const { livenessTarget } = await import('../src/liveness.js');
  assert.deepEqual(livenessTarget(['-k', '--cache-size=1000']), { host: '127.0.0.1', port: 53 });
  assert.deepEqual(livenessTarget(['--port=5353', '--listen-address=10.0.0.10,127.0.0.1']), { host: '10.0.0.10', port: 5353 });
  assert.deepEqual(livenessTarget(['-p', '1053', '-a', '169.254.20.10']), { host: '169.254.20.10', port: 1053 });
  assert.deepEqual(livenessTarget(['-p1053']), { host: '127.0.0.1', port: 1053 });
  assert.equal(livenessTarget(['--port=0']), undefined, 'no DNS service: nothing to probe');
});

test('a port set in a dnsmasq config file: the probe finds nothing where the arguments say, warns once, and leaves dnsmasq running', async (t) => {
  // the arguments say 53 (the default); the config file moves dnsmasq to the test's port
  const dir = mkdtempSync(join(tmpdir(), 'nanny-conf-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const conf = join(dir, 'dnsmasq.conf');
  const nanny = await startNanny(t, {
    config: { hosts: '192.0.2.5 h.example\n' },
    flags: ['-livenessProbeInterval=100ms', '-livenessProbeFailures=2'],
    rawDnsmasqArgs: (port) => {
      writeFileSync(conf, `port=${port}\n`);
      return [...loopbackDnsmasqArgs(port).filter((a) => !a.startsWith('--port=') && !a.startsWith('--conf-file=')), `--conf-file=${conf}`];
    },
  });
  const pid = nanny.dnsmasqPid()!;
  await new Promise((r) => setTimeout(r, 1500));
  assert.equal(nanny.dnsmasqPid(), pid, 'dnsmasq was not restarted');
  assert.deepEqual((await lookupA(nanny.port, 'h.example')).ips, ['192.0.2.5']);
  assert.ok(!nanny.logs.some((l) => /missed a liveness probe|dnsmasq is hung/.test(l.msg)), nanny.tail());
  assert.equal(nanny.logs.filter((l) => /the liveness probe finds nothing listening on 127\.0\.0\.1:53/.test(l.msg)).length, 1);
});
