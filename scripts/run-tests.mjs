#!/usr/bin/env node
// Runs every compiled test file (packages/*/dist/**/*.test.js) with node's test runner.
// Node 20's --test takes no globs, so we list the files here. Usage:
//   node scripts/run-tests.mjs [--repeat N] [substring...]
// substrings: only files whose path contains one. --repeat N: run the selection N times in a row,
// stopping at the first failing run (to show a suite is free of flakes, e.g. under extra load).
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
const args = process.argv.slice(2);
let repeat = 1;
const filters = [];
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  const m = /^--repeat(?:=(.*))?$/.exec(a);
  if (!m) {
    filters.push(a);
    continue;
  }
  const v = m[1] ?? args[++i];
  repeat = Number(v);
  if (!Number.isInteger(repeat) || repeat < 1) {
    console.error(`--repeat needs a whole number of runs ≥ 1, got ${JSON.stringify(v)}`);
    process.exit(2);
  }
}
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
// Node 20 applies --test-timeout to each file as a whole too, so a file that must run longer (the
// images test builds three images: up to 7 minutes from an empty cache) runs in its own
// invocation after the others, with its own guard.
const LONG_FILES = { 'images-e2e.test.js': 900_000 };
const longTimeout = (f) => Object.entries(LONG_FILES).find(([name]) => f.endsWith(`/${name}`))?.[1];
const batches = [
  { files: selected.filter((f) => !longTimeout(f)), timeout: 120_000 },
  ...selected.filter((f) => longTimeout(f)).map((f) => ({ files: [f], timeout: longTimeout(f) })),
].filter((b) => b.files.length > 0);
const runBatches = () => {
  let failed;
  for (const b of batches) {
    const guards = [`--test-timeout=${b.timeout}`, '--test-force-exit'];
    const r = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...guards, '--test-reporter=spec', ...b.files], {
      stdio: 'inherit',
      cwd: root,
    });
    if (r.status !== 0) failed ??= r;
  }
  return failed ?? { status: 0, signal: null };
};
for (let run = 1; run <= repeat; run++) {
  const started = Date.now();
  const r = runBatches();
  const took = `${((Date.now() - started) / 1000).toFixed(0)} s`;
  if (r.status !== 0) {
    console.error(`run ${run} of ${repeat} FAILED (${r.signal ?? `exit ${r.status}`}, ${took})${run > 1 ? `; the ${run - 1} run(s) before it passed` : ''}`);
    process.exit(r.status || 1);
  }
  if (repeat > 1) console.error(`run ${run} of ${repeat} passed (${took})`);
}
if (repeat > 1) console.error(`all ${repeat} runs passed`);
