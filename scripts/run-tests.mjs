#!/usr/bin/env node
// Runs every compiled test file (packages/*/dist/**/*.test.js) with node's test runner.
// Node 20's --test takes no globs, so we list the files here. Usage:
//   node scripts/run-tests.mjs [substring...]   (only files whose path contains a substring)
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const files = [];
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.js')) files.push(p);
  }
}
for (const pkg of readdirSync(join(root, 'packages'))) {
  const dist = join(root, 'packages', pkg, 'dist');
  try {
    walk(dist);
  } catch {
    /* package not built */
  }
}
const filters = process.argv.slice(2);
const selected = files
  .filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)))
  .sort();
if (selected.length === 0) {
  console.error('no test files found: run `npm run build` first');
  process.exit(1);
}
console.error(`running ${selected.length} test files:\n  ${selected.map((f) => relative(root, f)).join('\n  ')}`);
const concurrency = process.env.TEST_CONCURRENCY ?? '2';
// Guards so that a stuck test fails instead of holding CI for its 90 minutes: a per-test timeout,
// and --test-force-exit so a file whose tests finished cannot linger on a handle left open.
const guards = ['--test-timeout=120000', '--test-force-exit'];
const r = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...guards, '--test-reporter=spec', ...selected], {
  stdio: 'inherit',
  cwd: root,
});
process.exit(r.status ?? 1);
