// scripts/install.sh, the first step of both README commands: the demo installs only what the demo
// pod needs, the tests everything. Run for real in a mount namespace where some tools are hidden
// (a bind mount of /dev/null over them is not executable), with apt-get hidden too, so that the
// script takes the path of a machine that cannot install: it names what is missing and stops
// before npm (node is hidden as well, so that a script that went on could not run npm ci in this
// tree while other tests use it). Needs root (mount namespaces) and unshare; skips otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const INSTALL = fileURLToPath(new URL('../../../../scripts/install.sh', import.meta.url));

function which(cmd: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

const hidden = { dnsmasq: which('dnsmasq') ?? '/usr/sbin/dnsmasq', promtool: which('promtool'), aptGet: which('apt-get') };
// the expected lists below assume every other package is present (install.sh, run first, sees to it)
const missing = () => spawnSync('bash', [INSTALL, '--list-packages'], { encoding: 'utf8' }).stdout.split('\n').filter((l) => l.endsWith('\tmissing'));
const skip =
  process.getuid?.() !== 0 ? 'needs root (a mount namespace)'
  : !which('unshare') ? 'needs unshare (util-linux)'
  : !existsSync(hidden.dnsmasq) || !hidden.promtool || !hidden.aptGet ? 'needs dnsmasq, promtool and apt-get present, to hide them'
  : missing().length > 0 ? `needs every package of install.sh present; missing: ${missing().join(', ')}`
  : false;

// Runs install.sh with `args` in a mount namespace where dnsmasq, promtool and apt-get are hidden.
function installWithout(args: string[]) {
  const binds = [hidden.dnsmasq, hidden.promtool!, hidden.aptGet!, process.execPath].map((p) => `mount --bind /dev/null ${p}`).join(' && ');
  return spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', `${binds} && exec bash "$0" "$@"`, INSTALL, ...args], { encoding: 'utf8', timeout: 60_000 });
}

test('the demo asks only for the demo pod\'s packages; the tests for theirs', { skip }, () => {
  const demo = installWithout(['--demo']);
  assert.equal(demo.status, 1, demo.stderr);
  assert.match(demo.stderr, /^missing Debian packages: dnsmasq-base$/m);
  assert.match(demo.stderr, /sudo apt-get install dnsmasq-base /);

  const tests = installWithout([]);
  assert.equal(tests.status, 1, tests.stderr);
  assert.match(tests.stderr, /^missing Debian packages: dnsmasq-base prometheus$/m);

  const listed = installWithout(['--with-bench', '--list-packages']);
  assert.equal(listed.status, 0, listed.stderr);
  const state = new Map(listed.stdout.trim().split('\n').map((l) => l.split('\t') as [string, string]));
  assert.equal(state.get('dnsmasq-base'), 'missing');
  assert.equal(state.get('prometheus'), 'missing');
  assert.equal(state.get('bind9'), 'present');
  assert.ok(state.has('dnsperf') && state.has('podman'), listed.stdout);
});

test('install.sh refuses an unknown argument and two profiles at once, before installing anything', { skip }, () => {
  for (const args of [['--dmeo'], ['--demo', '--with-bench']]) {
    const r = installWithout(args);
    assert.equal(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /usage: scripts\/install\.sh \[--demo \| --with-bench\]/);
  }
});
