// A real dnsmasq process on loopback for tests (Debian's dnsmasq-base).
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { query } from '@kube-dns/dns-client';
import { freePort } from './ports.js';

export const DNSMASQ_PATHS = ['/usr/sbin/dnsmasq', '/usr/bin/dnsmasq'];

/** Path of the dnsmasq binary, or an error telling how to install it. */
export function dnsmasqPath(): string {
  const p = process.env.DNSMASQ ?? DNSMASQ_PATHS.find((x) => existsSync(x));
  if (!p) throw new Error('dnsmasq not found: install the Debian package dnsmasq-base (scripts/install.sh does it as root)');
  return p;
}

/** Arguments every test dnsmasq needs: foreground, loopback only, no system files, logs on stderr. */
export function baseDnsmasqArgs(port: number, host = '127.0.0.1'): string[] {
  return [
    '--keep-in-foreground',
    `--port=${port}`,
    `--listen-address=${host}`,
    '--bind-interfaces',
    '--no-hosts',
    '--no-resolv',
    '--conf-file=/dev/null',
    '--log-facility=-',
    '--user=root',
    '--pid-file=',
  ];
}

export interface RunningDnsmasq {
  port: number;
  host: string;
  process: ResultPromise;
  stop(): Promise<void>;
}

/** Waits until a DNS server answers anything at host:port. */
export async function waitForDns(host: string, port: number, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      await query({ host, port }, { name: 'cachesize.bind', type: 'TXT', class: 'CH', timeoutMs: 200 });
      return;
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`no DNS server answered at ${host}:${port} within ${timeoutMs} ms: ${String(last)}`);
}

/** Starts dnsmasq with the base arguments plus `args`, waits until it answers. */
export async function startDnsmasq(args: string[], opts: { port?: number; host?: string } = {}): Promise<RunningDnsmasq> {
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? (await freePort(host));
  const proc = execa(dnsmasqPath(), [...baseDnsmasqArgs(port, host), ...args], { reject: false, stdin: 'ignore' });
  const exited = proc.then((r) => {
    throw new Error(`dnsmasq exited early (${r.exitCode}): ${r.stderr}`);
  });
  await Promise.race([waitForDns(host, port), exited]);
  return {
    port,
    host,
    process: proc,
    stop: async () => {
      proc.kill('SIGTERM');
      await proc;
    },
  };
}

/** A temporary directory removed by the returned cleanup function. */
export async function tempDir(prefix = 'kube-dns-test-'): Promise<{ path: string; cleanup: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  return { path, cleanup: () => rm(path, { recursive: true, force: true }) };
}
