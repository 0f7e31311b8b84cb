// The whole pod, as `scripts/demo.sh` runs it: kube-dns, dnsmasq-nanny with a real dnsmasq and the
// sidecar, on the embedded demo cluster; every lookup an operator would try goes through dnsmasq.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const DEMO = fileURLToPath(new URL('../../../../scripts/demo.mjs', import.meta.url));

test('the demo pod answers cluster, ExternalName, PTR, hosts, stub and upstream names through dnsmasq', async () => {
  const p = spawn(process.execPath, [DEMO, '--check'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  p.stderr.on('data', (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => p.on('exit', resolve));
  assert.equal(code, 0, out);
  assert.match(out, /demo check: all passed/);
  assert.doesNotMatch(out, /FAIL/);
});
