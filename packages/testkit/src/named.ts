// A real BIND `named` (Debian bind9) on loopback as a secondary of zones kube-dns serves, for the
// zone-transfer tests: it takes NOTIFY from the primary, transfers with AXFR, and answers from
// its own copy. Runs in the foreground with a config in a temp dir; stop() kills it.
import { Buffer } from 'node:buffer';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa, type ResultPromise } from 'execa';
import { tempDir } from './dnsmasq.js';
import { freePort } from './ports.js';

export const NAMED_PATHS = ['/usr/sbin/named', '/usr/bin/named'];

/** Path of named, or an error telling how to install it. */
export function namedPath(): string {
  const p = process.env.NAMED ?? NAMED_PATHS.find((x) => existsSync(x));
  if (!p) throw new Error('named not found: install the Debian package bind9 (scripts/install.sh does it as root)');
  return p;
}

export interface RunningNamed {
  port: number;
  /** named's own log lines so far (stderr), for assertion messages. */
  log(): string;
  stop(): Promise<void>;
}

/** named.conf of a secondary that transfers `zones` from 127.0.0.1:`primaryPort`. */
export function secondaryConfig(dir: string, port: number, zones: string[], primaryPort: number): string {
  return `options {
  directory "${dir}";
  pid-file "${join(dir, 'named.pid')}";
  session-keyfile "${join(dir, 'session.key')}";
  managed-keys-directory "${dir}";
  listen-on port ${port} { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion no;
  dnssec-validation no;
  notify no;
  request-ixfr no;
  allow-notify { 127.0.0.1; };
  check-names secondary ignore;
  // refresh on NOTIFY, not on a fast timer: the test must see NOTIFY work
  min-refresh-time 300;
  max-refresh-time 600;
};
controls { };
${zones.map((z) => `zone "${z}" { type secondary; primaries { 127.0.0.1 port ${primaryPort}; }; file "${z}.db"; };`).join('\n')}
`;
}

export async function startNamedSecondary(zones: string[], primaryPort: number, port?: number): Promise<RunningNamed> {
  const dir = await tempDir('named-');
  port ??= await freePort();
  const conf = join(dir.path, 'named.conf');
  await writeFile(conf, secondaryConfig(dir.path, port, zones, primaryPort));
  let stderr = '';
  // -g: foreground, log to stderr; -4: IPv4 only; -n 1: one worker (the machine is shared)
  const proc: ResultPromise = execa(namedPath(), ['-g', '-4', '-n', '1', '-c', conf], { reject: false, stdin: 'ignore', all: false });
  proc.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 10_000;
  while (!/running/.test(stderr)) {
    if (proc.exitCode !== null) throw new Error(`named exited (${proc.exitCode}): ${stderr}`);
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`named did not start within 10 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    log: () => stderr,
    stop: async () => {
      proc.kill('SIGTERM');
      await proc;
      await dir.cleanup();
    },
  };
}
