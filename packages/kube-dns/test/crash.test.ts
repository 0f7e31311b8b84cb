// An exception nothing catches must not leave a binary running in an unknown state: each of the
// three binaries logs it with its stack and exits non-zero, so the kubelet restarts it. The
// exception is injected from outside (a module preloaded with --import throws from a timer when
// the test signals it, once the binary is up), so no test hook lives in the product.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dnsmasqPath, freePort, tempDir } from '@kube-dns/testkit';

const bin = (pkg: string, name: string) => fileURLToPath(new URL(`../../../${pkg}/bin/${name}.js`, import.meta.url));

async function crash(t: { after: (fn: () => unknown) => void }, binPath: string, args: string[], up: RegExp) {
  const dir = await tempDir('crash-test-');
  t.after(() => dir.cleanup());
  const preload = join(dir.path, 'inject.mjs');
  writeFileSync(preload, "process.on('SIGUSR2', () => setTimeout(() => { throw new Error('injected-crash-for-test'); }, 10));\n");
  const child = spawn(process.execPath, [`--import=${preload}`, binPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => child.kill('SIGKILL'));
  let stderr = '';
  let signalled = false;
  child.stderr.on('data', (d) => {
    stderr += d;
    if (!signalled && up.test(stderr)) {
      signalled = true; // the binary is up, its handlers installed: now crash it
      child.kill('SIGUSR2');
    }
  });
  child.stdout.on('data', () => undefined);
  const code = await new Promise<number | null | 'still running'>((resolve) => {
    const timer = setTimeout(() => resolve('still running'), 60_000);
    child.on('close', (c) => {
      clearTimeout(timer);
      resolve(c);
    });
  });
  return { code, stderr };
}

function assertCrashed(r: { code: number | null | 'still running'; stderr: string }) {
  assert.notEqual(r.code, 'still running', `the process went on after an uncaught exception:\n${r.stderr.slice(-2000)}`);
  assert.notEqual(r.code, 0);
  assert.notEqual(r.code, null);
  const line = r.stderr.split('\n').find((l) => l.includes('injected-crash-for-test'));
  assert.ok(line, `the exception is logged:\n${r.stderr.slice(-2000)}`);
  assert.match(line, /uncaught exception/);
  assert.match(line, /at Timeout\._onTimeout|at listOnTimeout/, 'with its stack');
}

test('kube-dns: an uncaught exception is logged with its stack and the process exits non-zero', async (t) => {
  const r = await crash(t, bin('kube-dns', 'kube-dns'), [
    '--dns-bind-address=127.0.0.1',
    '--dns-port=0',
    '--healthz-bind-address=127.0.0.1',
    '--healthz-port=0',
    `--kube-master-url=http://127.0.0.1:${await freePort()}`,
    '--nameservers=127.0.0.1:1',
  ], /serving DNS over UDP and TCP/);
  assertCrashed(r);
});

test('dnsmasq-nanny: an uncaught exception is logged with its stack, dnsmasq is stopped, the process exits non-zero', async (t) => {
  const dir = await tempDir('crash-nanny-');
  t.after(() => dir.cleanup());
  const port = await freePort();
  const r = await crash(t, bin('dnsmasq-nanny', 'dnsmasq-nanny'), [
    '-v=2',
    `-configDir=${dir.path}`,
    `--stateDir=${join(dir.path, 'state')}`,
    `-dnsmasqExec=${dnsmasqPath()}`,
    '--',
    '-k',
    `--port=${port}`,
    '--listen-address=127.0.0.1',
    '--bind-interfaces',
    '--no-hosts',
    '--conf-file=/dev/null',
    '--log-facility=-',
    '--user=root',
    '--pid-file=',
  ], /dnsmasq-nanny running/);
  assertCrashed(r);
  const pid = /"pid":(\d+)/.exec(r.stderr)?.[1];
  if (pid) {
    // the dnsmasq the nanny started is gone with it
    let alive = true;
    for (let i = 0; i < 50 && alive; i++) {
      try {
        process.kill(Number(pid), 0);
        await new Promise((res) => setTimeout(res, 100));
      } catch {
        alive = false;
      }
    }
    assert.equal(alive, false, `dnsmasq ${pid} outlived the nanny`);
  }
});

test('sidecar: an uncaught exception is logged with its stack and the process exits non-zero', async (t) => {
  const r = await crash(t, bin('sidecar', 'sidecar'), ['--prometheus-addr=127.0.0.1', `--prometheus-port=${await freePort()}`], /sidecar started/);
  assertCrashed(r);
});
