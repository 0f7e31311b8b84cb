import assert from 'node:assert/strict';
import { test } from 'node:test';
import { silentLogger } from '@kube-dns/config';
import type { ExitInfo } from '../src/dnsmasq-process.js';
import { Supervisor, type SupervisedProcess } from '../src/supervisor.js';
import { FakeClock, flush } from './fake-clock.js';

class FakeProc implements SupervisedProcess {
  static nextPid = 1000;
  readonly pid = FakeProc.nextPid++;
  readonly exited: Promise<ExitInfo>;
  ready = false;
  signals: string[] = [];
  private resolveExit!: (i: ExitInfo) => void;
  private waiters: (() => void)[] = [];
  constructor() {
    this.exited = new Promise((r) => (this.resolveExit = r));
  }
  whenReady(): Promise<void> {
    return this.ready ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }
  becomeReady(): void {
    this.ready = true;
    this.waiters.splice(0).forEach((w) => w());
  }
  die(info: Partial<ExitInfo> = {}): void {
    this.ready = false;
    this.resolveExit({ code: 1, lastLines: ['dnsmasq: bad command line options: try --help'], uptimeMs: 10, ...info });
    this.waiters.splice(0).forEach((w) => w());
  }
  signal(sig: NodeJS.Signals): boolean {
    this.signals.push(sig);
    return true;
  }
  kill(): void {
    this.signals.push('SIGKILL');
  }
  async stop(): Promise<ExitInfo> {
    this.die({ code: 0 });
    return this.exited;
  }
}

function setup() {
  const clock = new FakeClock();
  const procs: FakeProc[] = [];
  const sup = new Supervisor({ spawn: () => (procs.push(new FakeProc()), procs.at(-1)!), log: silentLogger(), clock });
  const fatal: Error[] = [];
  sup.on('fatal', (e) => fatal.push(e));
  return { clock, procs, sup, fatal };
}

test('restarts after 100, 200, 400, 800 ms and gives up on the 5th failure within a minute', async () => {
  const { clock, procs, sup, fatal } = setup();
  sup.start();
  const delays: number[] = [];
  for (let i = 0; i < 4; i++) {
    procs.at(-1)!.die();
    await flush();
    delays.push(...clock.pending());
    await clock.advance(clock.pending()[0]!);
    assert.equal(procs.length, i + 2, 'a new process after the backoff');
  }
  assert.deepEqual(delays, [100, 200, 400, 800]);
  assert.equal(fatal.length, 0);
  procs.at(-1)!.die();
  await flush();
  assert.equal(fatal.length, 1);
  assert.match(fatal[0]!.message, /dnsmasq failed 5 times within 60 s, giving up: it exited with status 1; last output: dnsmasq: bad command line options/);
  assert.deepEqual(clock.pending(), [], 'no further restart');
});

test('the backoff doubles up to 10 s for a process that keeps dying slowly, without giving up; a minute of uptime resets it', async () => {
  const { clock, procs, sup, fatal } = setup();
  sup.start();
  const delays: number[] = [];
  for (let i = 0; i < 9; i++) {
    await clock.advance(25_000);
    procs.at(-1)!.die({ uptimeMs: 25_000 });
    await flush();
    delays.push(clock.pending()[0]!);
    await clock.advance(clock.pending()[0]!);
  }
  assert.deepEqual(delays, [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000]);
  assert.equal(fatal.length, 0, 'never 5 failures within one minute');
  await clock.advance(70_000);
  procs.at(-1)!.die({ uptimeMs: 70_000, signal: 'SIGKILL', code: undefined });
  await flush();
  assert.deepEqual(clock.pending(), [100]);
});

test('a reload asked for while dnsmasq starts is sent once it can take signals; afterwards at once', async () => {
  const { procs, sup } = setup();
  sup.start();
  const p = procs[0]!;
  sup.reload();
  sup.reload();
  await flush();
  assert.deepEqual(p.signals, [], 'dnsmasq ignores SIGHUP during start-up: hold it back');
  p.becomeReady();
  await flush();
  assert.deepEqual(p.signals, ['SIGHUP']);
  sup.reload();
  assert.deepEqual(p.signals, ['SIGHUP', 'SIGHUP']);
});

test('stop() ends dnsmasq without a restart', async () => {
  const { clock, procs, sup, fatal } = setup();
  sup.start();
  await sup.stop();
  await clock.advance(20_000);
  assert.equal(procs.length, 1);
  assert.equal(fatal.length, 0);
});
