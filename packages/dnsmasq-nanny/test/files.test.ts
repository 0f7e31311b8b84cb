// The nanny's atomic writes on a volume that fails them: no temporary file is left behind, not
// by a failed write nor by a nanny that died mid-write (the state emptyDir outlives a restart).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { tempDir } from '@kube-dns/testkit';
import { startNanny } from './nanny-harness.js';

const FILES = pathToFileURL(join(import.meta.dirname, '../src/files.js')).href;

test('a write the volume refuses (file too large here, ENOSPC alike) fails and leaves no temporary file', async (t) => {
  const dir = await tempDir('atomic-write-');
  t.after(dir.cleanup);
  // a child whose files may not grow past 1 KiB, SIGXFSZ ignored: the write fails with EFBIG
  const script = `import { writeFileAtomic } from '${FILES}';
await writeFileAtomic(${JSON.stringify(join(dir.path, 'servers'))}, 'x'.repeat(8192)).then(() => console.log('written'), (e) => console.log(e.code));`;
  const r = spawnSync('bash', ['-c', 'trap "" XFSZ; ulimit -f 1; exec "$0" --input-type=module -e "$1"', process.execPath, script], { encoding: 'utf8' });
  assert.equal(r.stdout.trim(), 'EFBIG', r.stderr);
  assert.deepEqual(readdirSync(dir.path), []);
});

test('a temporary file left by a nanny that died mid-write is removed at the next start', async (t) => {
  const state = await tempDir('nanny-state-');
  t.after(state.cleanup);
  await writeFile(join(state.path, '.servers.4242.7.tmp'), 'server=/half/writ');
  await writeFile(join(state.path, 'notes.txt'), 'not ours to remove');
  await startNanny(t, { flags: [`--stateDir=${state.path}`] });
  const left = readdirSync(state.path).sort();
  assert.ok(!left.some((n) => n.endsWith('.tmp')), left.join(' '));
  assert.ok(left.includes('servers') && left.includes('notes.txt'), left.join(' '));
});
