// A binary started with `env` emits two Node process warnings 300 ms after it starts (a
// deprecation and another warning), through a module preloaded by NODE_OPTIONS: tests of what
// the binaries make of them (JSON log lines, not node's plain-text lines; config's
// logProcessWarnings).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tempDir } from './dnsmasq.js';

export const WARNING_CODE = 'KUBEDNS_TEST_WARNING';

export async function warningEmitter(): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  const dir = await tempDir('process-warnings-');
  const file = join(dir.path, 'emit-warnings.cjs');
  await writeFile(
    file,
    `setTimeout(() => {
  process.emitWarning('a test deprecation', 'DeprecationWarning', 'DEP0999');
  process.emitWarning('a warning an operator should see', { code: '${WARNING_CODE}' });
}, 300).unref();\n`,
  );
  const inherited = process.env.NODE_OPTIONS ? `${process.env.NODE_OPTIONS} ` : '';
  return { env: { NODE_OPTIONS: `${inherited}--require=${file}` }, cleanup: dir.cleanup };
}

/** What is wrong with a binary's stderr once the warnings were emitted (empty: nothing). */
export function warningProblems(stderr: string): string[] {
  const problems: string[] = [];
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  const parsed = lines.map((l) => {
    try {
      return JSON.parse(l) as { level?: number; code?: string; msg?: string };
    } catch {
      problems.push(`not a JSON line: ${l}`);
      return undefined;
    }
  });
  if (!parsed.some((l) => l?.code === WARNING_CODE && l.level === 40)) problems.push(`no warn-level line with code ${WARNING_CODE}`);
  if (parsed.some((l) => l?.code === 'DEP0999' && (l.level ?? 0) > 20)) problems.push('the deprecation was logged above debug');
  return problems;
}
