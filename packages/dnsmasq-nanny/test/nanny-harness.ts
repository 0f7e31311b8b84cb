// Runs the real nanny binary (and through it a real dnsmasq) on a loopback port for tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { query, rdataText } from '@kube-dns/dns-client';
import { dnsmasqPath, freePort, tempDir, waitForDns } from '@kube-dns/testkit';

const BIN = fileURLToPath(new URL('../../bin/dnsmasq-nanny.js', import.meta.url));

export interface LogLine {
  msg: string;
  [k: string]: unknown;
}

export interface RunningNanny {
  port: number;
  dir: string;
  configDir: string;
  stateDir: string;
  proc: ChildProcess;
  logs: LogLine[];
  /** Non-JSON stderr output (flag errors). */
  rawOutput: string[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first log line (already seen or future) matching `pred`. */
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs?: number, fromIndex?: number): Promise<LogLine>;
  /** Replaces a ConfigMap key the way a kubelet does: atomically. */
  setKey(key: string, content: string): Promise<void>;
  /** The last log lines, for a failure message. */
  tail(): string;
  /** The pid of the dnsmasq currently running (from the nanny's log). */
  dnsmasqPid(): number | undefined;
  stop(): Promise<void>;
}

export interface NannyStartOptions {
  /** ConfigMap keys written before start. */
  config?: Record<string, string>;
  /** Nanny flags (before `--`). */
  flags?: string[];
  /** Extra dnsmasq arguments (after the loopback base). */
  dnsmasqArgs?: string[];
  /** Replace the whole dnsmasq argument list (the port is still chosen here). */
  rawDnsmasqArgs?: (port: number) => string[];
  waitReady?: boolean;
  /** Extra environment (the downward API's POD_NAME, ...). */
  env?: Record<string, string>;
}

/** The loopback dnsmasq base, minus what the nanny adds itself (--no-resolv, -k). */
export function loopbackDnsmasqArgs(port: number): string[] {
  return [
    '-k',
    `--port=${port}`,
    '--listen-address=127.0.0.1',
    '--bind-interfaces',
    '--no-hosts',
    '--conf-file=/dev/null',
    '--log-facility=-',
    '--user=root',
    '--pid-file=',
  ];
}

export async function startNanny(t: { after: (fn: () => unknown) => void }, o: NannyStartOptions = {}): Promise<RunningNanny> {
  const tmp = await tempDir('nanny-test-');
  const configDir = join(tmp.path, 'config');
  const stateDir = join(tmp.path, 'state');
  await mkdir(configDir);
  for (const [k, v] of Object.entries(o.config ?? {})) await writeFile(join(configDir, k), v);
  const port = await freePort();
  const dnsmasqArgs = o.rawDnsmasqArgs ? o.rawDnsmasqArgs(port) : [...loopbackDnsmasqArgs(port), ...(o.dnsmasqArgs ?? [])];
  const args = [
    BIN,
    '-v=2',
    '-logtostderr',
    `-configDir=${configDir}`,
    `--stateDir=${stateDir}`,
    `-dnsmasqExec=${dnsmasqPath()}`,
    '-restartDnsmasq=true',
    '-syncInterval=500ms',
    // tests stop the nanny at teardown: no lameduck wait unless a test asks for one
    '-lameduck=0s',
    ...(o.flags ?? []),
    '--',
    ...dnsmasqArgs,
  ];
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...o.env } });
  const logs: LogLine[] = [];
  const rawOutput: string[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: proc.stderr! }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as LogLine);
    } catch {
      rawOutput.push(line);
    }
    for (const w of waiters) w();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => {
      for (const w of waiters) w();
      resolve({ code, signal });
    }),
  );
  let exited = false;
  void exit.then(() => (exited = true));

  const waitForLog = (pred: (l: LogLine) => boolean, timeoutMs = 30_000, fromIndex = 0) =>
    new Promise<LogLine>((resolve, reject) => {
      const check = () => {
        const hit = logs.slice(fromIndex).find(pred);
        if (hit) {
          done();
          resolve(hit);
        } else if (exited) {
          done();
          reject(new Error(`nanny exited before the expected log line; last lines:\n${tail()}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`expected log line not seen within ${timeoutMs} ms; last lines:\n${tail()}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        waiters.delete(check);
      };
      waiters.add(check);
      check();
    });
  const tail = () => [...logs.slice(-15).map((l) => JSON.stringify(l)), ...rawOutput.slice(-5)].join('\n');

  const nanny: RunningNanny = {
    port,
    dir: tmp.path,
    configDir,
    stateDir,
    proc,
    logs,
    rawOutput,
    exit,
    waitForLog,
    tail,
    setKey: async (key, content) => {
      const tmpFile = join(configDir, `.${key}.tmp`);
      await writeFile(tmpFile, content);
      await rename(tmpFile, join(configDir, key));
    },
    dnsmasqPid: () => {
      const started = logs.filter((l) => l.msg === 'dnsmasq started' || l.msg === 'dnsmasq restarted');
      return started.at(-1)?.dnsmasqPid as number | undefined;
    },
    stop: async () => {
      if (!exited) {
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 8000);
        await exit;
        clearTimeout(timer);
      }
    },
  };
  t.after(async () => {
    await nanny.stop();
    await tmp.cleanup();
  });
  if (o.waitReady !== false) {
    // Generous: starting node and dnsmasq can take seconds on a loaded machine.
    await waitForDns('127.0.0.1', port, 30_000);
    // The log line may trail dnsmasq's first answer through the pipe.
    await waitForLog((l) => l.msg === 'dnsmasq started');
  }
  return nanny;
}

/** The A answers for `name` through the nanny's dnsmasq ('' entries dropped). */
export async function lookupA(port: number, name: string, timeoutMs = 2000): Promise<{ rcode: string; ips: string[] }> {
  const r = await query({ host: '127.0.0.1', port }, { name, type: 'A', timeoutMs });
  const p = r.packet as { rcode?: string; answers?: import('dns-packet').Answer[] };
  return { rcode: p.rcode ?? 'NOERROR', ips: (p.answers ?? []).filter((a) => a.type === 'A').map(rdataText) };
}

/** Polls `fn` until it returns true. */
export async function eventually(fn: () => Promise<boolean> | boolean, timeoutMs: number, what: string, stepMs = 50, context?: () => string): Promise<number> {
  const start = Date.now();
  for (;;) {
    try {
      if (await fn()) return Date.now() - start;
    } catch {
      /* not yet */
    }
    if (Date.now() - start > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms${context ? `; last lines:\n${context()}` : ''}`);
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

/** Whether a process exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
