// The whole pod, as `scripts/demo.sh` runs it: kube-dns, dnsmasq-nanny with a real dnsmasq and the
// sidecar, on the embedded demo cluster; every lookup an operator would try goes through dnsmasq.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dnsmasqPath } from '../src/index.js';

const DEMO = fileURLToPath(new URL('../../../../scripts/demo.mjs', import.meta.url));

test('the demo pod answers cluster, ExternalName, PTR, hosts, stub and upstream names through dnsmasq', async () => {
  const p = spawn(process.execPath, [DEMO, '--check'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  p.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => p.on('exit', resolve));
  assert.equal(code, 0, out);
  assert.match(out, /demo check: all passed/);
  assert.doesNotMatch(out, /FAIL/);
});

// The demo's processes: its children and theirs (dnsmasq), from /proc, while the demo runs.
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // "pid (comm) state ppid ...": comm may hold spaces, so read after its last ')'
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      /* gone meanwhile */
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [child, ppid] of parent) if (ppid === pid) (out.push(child), walk(child));
  };
  walk(root);
  return out;
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** Runs the demo with `args`, recording every process it starts; `act` may signal it. */
async function runDemo(args: string[], env: NodeJS.ProcessEnv, act?: (p: ChildProcess, seen: Set<number>) => void) {
  const p = spawn(process.execPath, [DEMO, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  p.stdout!.on('data', (d) => (out += d));
  p.stderr!.on('data', (d) => (out += d));
  const seen = new Set<number>();
  const exited = new Promise<number | null>((resolve) => p.on('exit', resolve));
  const poll = setInterval(() => {
    for (const pid of descendants(p.pid!)) seen.add(pid);
    act?.(p, seen);
  }, 50);
  const code = await exited;
  clearInterval(poll);
  return { code, out, seen: [...seen] };
}
/** What is still running of `pids` some seconds after the demo exited (then ended, not left behind). */
async function leftBehind(pids: number[]): Promise<number[]> {
  const deadline = Date.now() + 10_000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const left = pids.filter(alive);
  for (const pid of left) process.kill(pid, 'SIGKILL');
  return left;
}

test('a demo stopped while it starts stops its whole pod: no kube-dns, nanny, dnsmasq or sidecar left', async () => {
  // --ports-file: the pod's probes at their usual 5 s, so the start takes seconds; SIGTERM once
  // all four processes run, as a service manager or `timeout` would send it
  const dir = await mkdtemp(join(tmpdir(), 'demo-'));
  try {
    let sent = false;
    const r = await runDemo([`--ports-file=${join(dir, 'ports.json')}`], process.env, (p, seen) => {
      if (!sent && seen.size >= 4) (sent = true, p.kill('SIGTERM'));
    });
    assert.ok(sent, `the demo ended before its pod was up (${r.code}):\n${r.out}`);
    assert.deepEqual(await leftBehind(r.seen), [], `processes of the demo left running:\n${r.out}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a failed --check stops the pod and keeps its logs', async () => {
  // a dnsmasq that answers example.org itself: the upstream check fails, every other passes
  const dir = await mkdtemp(join(tmpdir(), 'demo-'));
  try {
    const wrapper = join(dir, 'dnsmasq');
    await writeFile(wrapper, `#!/bin/sh\nexec ${dnsmasqPath()} "$@" --address=/example.org/192.0.2.99\n`, { mode: 0o755 });
    const r = await runDemo(['--check'], { ...process.env, DNSMASQ: wrapper });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /FAIL www\.example\.org A \(upstream\)/);
    assert.ok(r.seen.length >= 4, `not every process of the pod was seen: ${r.seen.join(' ')}`);
    assert.deepEqual(await leftBehind(r.seen), [], `processes of the demo left running:\n${r.out}`);
    const logs = /logs in (\S+)\)/.exec(r.out)?.[1];
    assert.ok(logs && existsSync(join(logs, 'kubedns.log')), `the logs it names are gone:\n${r.out}`);
    await rm(dirname(logs), { recursive: true, force: true });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a demo whose ports are taken (another demo running) says so at once and touches nothing; a bad argument is refused', async (t) => {
  const { createSocket } = await import('node:dgram');
  const { freePort } = await import('../src/index.js');
  const port = await freePort();
  const holder = createSocket('udp4');
  await new Promise<void>((r) => holder.bind(port, '127.0.0.1', () => r()));
  t.after(() => holder.close());
  const run = async (args: string[]) => {
    const p = spawn(process.execPath, [DEMO, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((resolve) => p.on('exit', resolve));
    return { code, out };
  };
  // the running demo's directory (its ConfigMap and logs) must survive the second one
  const runDir = join(dirname(DEMO), '..', '.demo', 'run');
  const marker = join(runDir, `still-here-${process.pid}`);
  await mkdir(runDir, { recursive: true });
  await writeFile(marker, '');
  t.after(() => rm(marker, { force: true }));
  const started = Date.now();
  const busy = await run([`--dns-port=${port}`, '--auto-ports']);
  assert.equal(busy.code, 1, busy.out);
  assert.ok(existsSync(marker), '.demo/run left alone');
  assert.match(busy.out, new RegExp(`port in use: dns ${port}/udp \\(another demo running\\? --auto-ports picks free ones\\)`));
  assert.ok(Date.now() - started < 15_000, 'at once, not after a start-up timeout');
  const typo = await run(['--chek']);
  assert.equal(typo.code, 2);
  assert.match(typo.out, /Unknown option '--chek'/);
  const nan = await run(['--dns-port=53x']);
  assert.equal(nan.code, 2);
  assert.match(nan.out, /--dns-port=53x: not a port/);
});
