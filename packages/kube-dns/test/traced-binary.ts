// kube-dns's binary (bin/kube-dns.js, the bundle the image runs) started with node flags of a
// test's choosing, V8's traces among them, under the manifest's NODE_OPTIONS, and its standard
// output collected: for tests that read what V8 says of the running server. And the traffic they
// send it, from a process of its own.
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, type FakeApiServer } from '@kube-dns/testkit';
import { manifestNodeOptions } from './pod-through-dnsmasq.js';

const BIN = fileURLToPath(new URL('../../bin/kube-dns.js', import.meta.url));
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface TracedKubeDns {
  dnsPort: number;
  process: ChildProcess;
  /** Everything it has written to standard output so far. */
  output(): string;
}

/** Starts it against `api` (upstream: a closed port) and waits until it is ready; killed after the test. */
export async function startTracedKubeDns(t: TestContext, api: FakeApiServer, nodeFlags: string[]): Promise<TracedKubeDns> {
  const [dnsPort, healthzPort] = [await freePort(), await freePort()];
  const kd = spawn(process.execPath, [...nodeFlags, BIN, '--dns-bind-address=127.0.0.1', `--dns-port=${dnsPort}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthzPort}`, `--kubecfg-file=${api.kubeconfigPath}`, '--nameservers=127.0.0.1:9'], {
    env: { ...process.env, NODE_OPTIONS: manifestNodeOptions() },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  t.after(() => kd.kill('SIGKILL'));
  let out = '';
  kd.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  for (let i = 0; ; i++) {
    if (await fetch(`http://127.0.0.1:${healthzPort}/readiness`).then((r) => r.ok, () => false)) break;
    assert.ok(i < 600, 'kube-dns did not become ready');
    await sleep(50);
  }
  return { dnsPort, process: kd, output: () => out };
}

/**
 * Sends A queries over UDP to 127.0.0.1:`port` for `seconds` from a child process, `perBurst` at a
 * time, a burst every `pauseMs` ms (0: again at once), and resolves when it is done. `nameOfN` is
 * a JavaScript expression of n, the query's number: the name it asks.
 */
export async function sendQueries(t: TestContext, port: number, seconds: number, o: { nameOfN: string; perBurst: number; pauseMs: number }): Promise<void> {
  const program = `const s = require('node:dgram').createSocket('udp4'); const [port, seconds] = process.argv.slice(1).map(Number);
const end = Date.now() + seconds * 1000; let n = 0;
function q(name) { const b = [0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]; for (const l of name.split('.')) { b.push(l.length); for (const c of l) b.push(c.charCodeAt(0)); } b.push(0, 0, 1, 0, 1); return Buffer.from(b); }
function burst() { for (let i = 0; i < ${o.perBurst}; i++, n++) s.send(q(${o.nameOfN}), port, '127.0.0.1');
  if (Date.now() < end) ${o.pauseMs > 0 ? `setTimeout(burst, ${o.pauseMs})` : 'setImmediate(burst)'}; else setTimeout(() => process.exit(0), 200); } burst();`;
  const child = spawn(process.execPath, ['-e', program, String(port), String(seconds)], { stdio: 'ignore' });
  t.after(() => child.kill('SIGKILL'));
  await new Promise((r) => child.once('exit', r));
}
