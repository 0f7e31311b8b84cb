// scripts/images.sh's first step: it rebuilds the bundles (`npm run build`) when they are older
// than what they are built from, and otherwise ships them as they are. Run on a copy of the files
// it looks at, with stand-ins for npm, podman and mmdebstrap on PATH that only log their calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const ROOT = new URL('../../../../', import.meta.url).pathname;
const IMAGES = ['kube-dns', 'dnsmasq-nanny', 'sidecar'];

/** Runs images.sh in a copy where `newer` was changed after the last build; true if it ran npm run build. */
function rebuildsAfterChanging(newer: string): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'images-sh-'));
  try {
    const put = (rel: string, text?: string) => {
      mkdirSync(dirname(join(dir, rel)), { recursive: true });
      if (text === undefined) copyFileSync(join(ROOT, rel), join(dir, rel));
      else writeFileSync(join(dir, rel), text);
    };
    for (const f of ['scripts/images.sh', 'scripts/bundle.mjs', 'images/Dockerfile', 'package.json', 'package-lock.json', 'tsconfig.base.json']) put(f);
    put('images/preload/drop-symbol-tables.c', '');
    put('images/preload/bundle/drop-symbol-tables.so', '');
    for (const b of IMAGES) {
      put(`packages/${b}/package.json`);
      put(`packages/${b}/src/main.ts`, '');
      put(`packages/${b}/bundle/${b}.cjs`, '');
    }
    // everything built at t0 + 100 from sources of t0; then `newer` changes
    const t0 = Date.now() / 1000 - 3600;
    const all = spawnSync('find', [dir], { encoding: 'utf8' }).stdout.trim().split('\n');
    for (const f of all) utimesSync(f, t0, /\/bundle(\/|$)/.test(f) ? t0 + 100 : t0);
    utimesSync(join(dir, newer), t0 + 200, t0 + 200);

    const bin = join(dir, 'stand-ins');
    mkdirSync(bin);
    const log = join(dir, 'calls.log');
    for (const name of ['npm', 'podman', 'mmdebstrap']) {
      // each logs its call and fails: images.sh stops at the first (set -e)
      writeFileSync(join(bin, name), `#!/bin/sh\necho "${name} $*" >>"${log}"\nexit 1\n`);
      chmodSync(join(bin, name), 0o755);
    }
    spawnSync('bash', [join(dir, 'scripts/images.sh')], { env: { ...process.env, PATH: `${bin}:${process.env['PATH']}`, IMAGES_CACHE: join(dir, 'cache') }, encoding: 'utf8' });
    let calls = '';
    try {
      calls = readFileSync(log, 'utf8');
    } catch {
      /* nothing ran */
    }
    assert.match(calls, /^(npm run build|mmdebstrap )/m, `images.sh got to its first step:\n${calls}`);
    return /^npm run build\b/m.test(calls);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('images.sh ships the bundles as they are when nothing they are built from changed', () => {
  assert.equal(rebuildsAfterChanging('images/Dockerfile'), false);
});

for (const changed of ['packages/sidecar/src/main.ts', 'packages/kube-dns/package.json', 'package-lock.json', 'scripts/bundle.mjs', 'tsconfig.base.json']) {
  test(`images.sh rebuilds the bundles after a change to ${changed}`, () => {
    // package-lock.json: a dependency updated for a security fix (npm update, npm audit fix) while
    // every package.json stays as it was; the image must not ship the old dependency
    assert.equal(rebuildsAfterChanging(changed), true);
  });
}
