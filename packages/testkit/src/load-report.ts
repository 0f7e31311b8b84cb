// What a running binary has loaded: a script preloaded with `--require` that, on SIGUSR2, writes
// the modules the bundle held back until first use and then loaded (scripts/bundle.mjs notes them
// in a global list) and node's own modules (process.moduleLoadList). The lazy-modules tests of
// kube-dns and the sidecar read it from a serving process.
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface LoadReport {
  /** Paths (under node_modules) of the held-back modules that were loaded, in order. */
  lazy: string[];
  /** process.moduleLoadList: 'NativeModule http', … */
  builtins: string[];
}

export async function loadReporter(): Promise<{ preload: string; read: (child: ChildProcess, timeoutMs?: number) => Promise<LoadReport>; close: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'load-report-'));
  const report = join(dir, 'loaded.json');
  const preload = join(dir, 'report.cjs');
  await writeFile(
    preload,
    // written under another name and renamed: the reader polls, and must never see a file that is
    // created but not yet written (an empty read, 'Unexpected end of JSON input')
    `process.on('SIGUSR2', () => { const fs = require('node:fs'); fs.writeFileSync(${JSON.stringify(report + '.tmp')}, JSON.stringify({ lazy: globalThis[Symbol.for('kube-dns.lazy-loaded')] ?? [], builtins: process.moduleLoadList })); fs.renameSync(${JSON.stringify(report + '.tmp')}, ${JSON.stringify(report)}); });\n`,
  );
  const read = async (child: ChildProcess, timeoutMs = 10_000): Promise<LoadReport> => {
    child.kill('SIGUSR2');
    // the file appears once the signal is handled
    const end = Date.now() + timeoutMs;
    for (;;) {
      const text = await readFile(report, 'utf8').catch(() => undefined);
      if (text !== undefined) return JSON.parse(text) as LoadReport;
      if (Date.now() > end) throw new Error(`no load report from pid ${child.pid} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  return { preload, read, close: () => rm(dir, { recursive: true, force: true }) };
}
