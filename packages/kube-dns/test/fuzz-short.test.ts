// A short run of the fuzzer (fuzz/, `npm run fuzz`) in the test command: every target, the
// checked-in corpus first, then a few seconds of mutations from a fresh seed (printed, so a
// failure is repeated with --seed). Longer runs: npm run fuzz -- --seconds 300.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../../../fuzz/dist/main.js', import.meta.url));

test('fuzzing the packet entry point, the ConfigMap parser and the hosts parser finds nothing', (t) => {
  const seconds = process.env.FUZZ_SECONDS ?? '3';
  const r = spawnSync(process.execPath, [MAIN, `--seconds=${seconds}`], { encoding: 'utf8', timeout: 100_000 });
  t.diagnostic(r.stdout.trim());
  assert.equal(r.status, 0, `the fuzzer failed:\n${r.stdout}\n${r.stderr}`);
  for (const target of ['packet', 'configmap', 'hosts']) {
    const m = new RegExp(`^${target}: (\\d+) execs`, 'm').exec(r.stdout);
    assert.ok(m && Number(m[1]) > 50, `${target} ran (${m?.[1]} execs)`);
  }
});
