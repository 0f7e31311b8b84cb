// The real nanny supervising a real dnsmasq: crash recovery, crash loops, shutdown.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { test } from 'node:test';
import { WARNING_CODE, startTestDnsServer, warningEmitter, warningProblems } from '@kube-dns/testkit';
import { alive, eventually, loopbackDnsmasqArgs, lookupA, startNanny } from './nanny-harness.js';

test('kill -9 of dnsmasq: the nanny restarts it after its 100 ms backoff, with the same configuration', async (t) => {
  const stub = await startTestDnsServer({ answerIp: '10.3.0.1' });
  t.after(() => stub.close());
  const nanny = await startNanny(t, {
    config: { stubDomains: JSON.stringify({ 'acme.local': [`127.0.0.1:${stub.port}`] }), hosts: '192.0.2.5 h.example\n' },
  });
  const first = nanny.dnsmasqPid();
  assert.ok(first && alive(first));

  const mark = nanny.logs.length;
  process.kill(first, 'SIGKILL');
  // How fast the new one answers is the bench's business; here: that it does, through the stub.
  const ms = await eventually(async () => (await lookupA(nanny.port, 'after.acme.local', 200)).ips.join() === '10.3.0.1', 15_000, 'answer from a new dnsmasq', 20);
  t.diagnostic(`a new dnsmasq answered ${ms} ms after the kill`);
  const restarted = await nanny.waitForLog((l) => l.msg === 'dnsmasq restarted', 10_000, mark);
  assert.notEqual(restarted.dnsmasqPid, first);
  assert.ok(nanny.logs.slice(mark).some((l) => l.level === 50 && /killed by SIGKILL; restarting in 100 ms/.test(l.msg)));
  assert.deepEqual((await lookupA(nanny.port, 'h.example')).ips, ['192.0.2.5'], 'hosts survive the restart');
  assert.equal(nanny.proc.exitCode, null, 'the nanny itself keeps running');
});

/** The pids whose parent is `pid` (dnsmasq forks one per TCP connection). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces, so split after its ')'
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Whether `pid` runs: a killed child left to a slow reaper stays a zombie ('Z') for a while. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** An idle TCP client of dnsmasq, and the child dnsmasq forked for it. */
async function idleTcpClient(t: { after: (fn: () => unknown) => void }, port: number, dnsmasqPid: number): Promise<{ sock: Socket; child: number }> {
  const sock = connect(port, '127.0.0.1');
  sock.on('error', () => undefined);
  t.after(() => sock.destroy());
  await new Promise((r) => sock.once('connect', r));
  let child = 0;
  await eventually(() => (child = childrenOf(dnsmasqPid)[0] ?? 0) > 0, 5000, 'dnsmasq forked a TCP child');
  return { sock, child };
}

test('kill -9 of dnsmasq while a TCP client is connected: restarted at once, its TCP child gone with it', async (t) => {
  const nanny = await startNanny(t, { config: { hosts: '192.0.2.5 h.example\n' } });
  const first = nanny.dnsmasqPid()!;
  const { child } = await idleTcpClient(t, nanny.port, first);
  // the child holds dnsmasq's stdout/stderr and its listening sockets: the exit must not wait
  // for the pipes, and the restart must not find the port taken
  const mark = nanny.logs.length;
  process.kill(first, 'SIGKILL');
  const ms = await eventually(async () => (await lookupA(nanny.port, 'h.example', 200)).ips.join() === '192.0.2.5', 10_000, 'answer from a new dnsmasq', 20, () => nanny.tail());
  t.diagnostic(`a new dnsmasq answered ${ms} ms after the kill`);
  assert.ok(nanny.logs.slice(mark).some((l) => /killed by SIGKILL; restarting in 100 ms/.test(l.msg)));
  assert.equal(running(child), false, 'the TCP child of the killed dnsmasq is gone');
});

test('SIGTERM with dnsmasq stopped (SIGSTOP) and a TCP client connected: dnsmasq and its children go, the nanny exits 0 at once', async (t) => {
  const nanny = await startNanny(t, { flags: ['-lameduck=0s', '-livenessProbeInterval=0'] });
  const pid = nanny.dnsmasqPid()!;
  const { child } = await idleTcpClient(t, nanny.port, pid);
  process.kill(pid, 'SIGSTOP');
  t.after(() => alive(pid) && process.kill(pid, 'SIGKILL'));
  const t0 = Date.now();
  nanny.proc.kill('SIGTERM');
  const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the nanny had not exited 10 s after SIGTERM')), 10_000).unref());
  const { code } = await Promise.race([nanny.exit, late]);
  const ms = Date.now() - t0;
  assert.equal(code, 0);
  assert.ok(ms < 4000, `the nanny took ${ms} ms to exit`);
  assert.equal(alive(pid), false, 'dnsmasq is gone');
  await eventually(() => !running(child), 2000, 'its TCP child is gone');
});

test('a signal that ends the nanny (SIGHUP, SIGUSR2, ...) takes dnsmasq and its TCP children with it', async (t) => {
  for (const sig of ['SIGHUP', 'SIGUSR2'] as const) {
    const nanny = await startNanny(t);
    const pid = nanny.dnsmasqPid()!;
    const { child } = await idleTcpClient(t, nanny.port, pid);
    t.after(() => alive(pid) && process.kill(pid, 'SIGKILL'));
    nanny.proc.kill(sig);
    const { signal } = await nanny.exit;
    assert.equal(signal, sig, 'the nanny dies of the signal, as by default');
    await eventually(() => !running(pid) && !running(child), 2000, `${sig}: dnsmasq and its TCP child are gone`);
  }
});

test('a dnsmasq that cannot start: restarts with backoff, then a clear error and a non-zero exit', async (t) => {
  const nanny = await startNanny(t, {
    rawDnsmasqArgs: (port) => [...loopbackDnsmasqArgs(port), '--no-such-option'],
    waitReady: false,
  });
  const started = Date.now();
  const { code } = await nanny.exit;
  const elapsed = Date.now() - started;
  assert.equal(code, 255);
  const restarts = nanny.logs.filter((l) => l.msg === 'dnsmasq restarted');
  assert.equal(restarts.length, 4, 'started 5 times in all');
  const delays = nanny.logs.filter((l) => typeof l.restartInMs === 'number').map((l) => l.restartInMs);
  assert.deepEqual(delays, [100, 200, 400, 800]);
  assert.ok(elapsed >= 1500, `gave up after ${elapsed} ms, before the backoff ran out`);
  const fatal = nanny.logs.find((l) => l.level === 60);
  assert.ok(fatal, 'a fatal log line');
  assert.match(fatal.msg, /dnsmasq failed 5 times within 60 s, giving up: it exited with status 1; last output: dnsmasq: bad command line options.*\(dnsmasq command: .*--no-such-option/);
});

test('a missing dnsmasq executable is reported clearly and ends in a non-zero exit', async (t) => {
  const nanny = await startNanny(t, { flags: ['-dnsmasqExec=/nonexistent/dnsmasq'], waitReady: false });
  const { code } = await nanny.exit;
  assert.equal(code, 255);
  assert.match(nanny.logs.find((l) => l.level === 60)!.msg, /could not be started: .*ENOENT|could not be started: .*\/nonexistent\/dnsmasq/);
});

test('SIGTERM: dnsmasq keeps answering for -lameduck, then stops, and the nanny exits 0', async (t) => {
  const nanny = await startNanny(t, { config: { hosts: '192.0.2.5 h.example\n' }, flags: ['-lameduck=1500ms'] });
  const pid = nanny.dnsmasqPid()!;
  assert.ok(alive(pid));
  const t0 = Date.now();
  nanny.proc.kill('SIGTERM');
  await nanny.waitForLog((l) => /^lameduck/.test(l.msg));
  // answers all through the lameduck period
  let answered = 0;
  while (Date.now() - t0 < 1200) {
    assert.deepEqual((await lookupA(nanny.port, 'h.example', 500)).ips, ['192.0.2.5'], `answered ${Date.now() - t0} ms after SIGTERM`);
    answered++;
    await new Promise((r) => setTimeout(r, 50));
  }
  const { code } = await nanny.exit;
  assert.equal(code, 0);
  assert.ok(Date.now() - t0 >= 1500, 'not before the lameduck period ended');
  assert.equal(alive(pid), false, 'dnsmasq is gone');
  assert.ok(!nanny.logs.some((l) => l.msg === 'dnsmasq restarted'));
  t.diagnostic(`${answered} queries answered during the lameduck period`);
});

test('bad flags exit 2 naming the flag; a --servers-file among the dnsmasq arguments exits 1 saying why', async (t) => {
  const bad = await startNanny(t, { flags: ['-syncInterval=10'], waitReady: false });
  assert.equal((await bad.exit).code, 2);
  assert.match(bad.rawOutput.join('\n'), /invalid value for --syncInterval: invalid duration "10"/);

  const conflict = await startNanny(t, { dnsmasqArgs: ['--servers-file=/tmp/x'], waitReady: false });
  assert.equal((await conflict.exit).code, 1);
  assert.match(conflict.logs.find((l) => l.level === 60)!.msg, /--servers-file is managed by dnsmasq-nanny/);
});

test('node\'s process warnings come out as JSON log lines: a deprecation at debug, any other warning at warn', async (t) => {
  const w = await warningEmitter();
  t.after(w.cleanup);
  const nanny = await startNanny(t, { env: w.env });
  await nanny.waitForLog((l) => l.code === WARNING_CODE, 15_000);
  await new Promise((res) => setTimeout(res, 200)); // both warnings' lines
  const stderr = [...nanny.logs.map((l) => JSON.stringify(l)), ...nanny.rawOutput].join('\n');
  assert.deepEqual(warningProblems(stderr), []);
});
