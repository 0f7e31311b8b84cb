// The --addn-hosts watch: an edit reaches dnsmasq (through onChange) by inotify, and by the stat
// poll when inotify gives nothing (a node out of inotify instances, or an edit made during
// chokidar's initial scan).
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { FSWatcher } from 'chokidar';
import { silentLogger } from '@kube-dns/config';
import { tempDir } from '@kube-dns/testkit';
import { hostsFingerprint, watchAddnHosts } from '../src/watch-hosts.js';

const log = silentLogger();

function calls(): { count: () => number; fn: () => void; next: (ms: number) => Promise<number> } {
  let n = 0;
  let wake: (() => void) | undefined;
  return {
    count: () => n,
    fn: () => {
      n++;
      wake?.();
    },
    next: (ms) =>
      new Promise((resolve, reject) => {
        const before = n;
        const timer = setTimeout(() => reject(new Error(`no onChange within ${ms} ms`)), ms);
        wake = () => {
          if (n > before) {
            clearTimeout(timer);
            resolve(n);
          }
        };
      }),
  };
}

/** A chokidar stand-in for a node out of inotify instances: it reports the error and never an event. */
const noInotify = (() => {
  const w = new EventEmitter() as unknown as FSWatcher & EventEmitter;
  (w as unknown as { close: () => Promise<void> }).close = async () => {};
  setImmediate(() => w.emit('error', Object.assign(new Error('inotify_init: too many open files'), { code: 'EMFILE' })));
  return w;
}) as unknown as typeof import('chokidar').watch;

test('an edit of an --addn-hosts file asks dnsmasq to re-read it, once per burst of writes', async (t) => {
  const tmp = await tempDir('watch-hosts-');
  t.after(() => tmp.cleanup());
  const file = join(tmp.path, 'extra.hosts');
  await writeFile(file, '198.51.100.1 printer\n');
  const c = calls();
  const w = watchAddnHosts([file], c.fn, log, { pollMs: 0, debounceMs: 100 });
  t.after(() => w.close());
  await w.ready; // chokidar's initial scan: an edit during it raises no event
  const next = c.next(5000);
  await writeFile(file, '198.51.100.2 printer\n');
  await writeFile(file, '198.51.100.3 printer\n');
  await next;
  await new Promise((r) => setTimeout(r, 400));
  assert.equal(c.count(), 1, 'one reload for two quick writes');
});

/** The kubelet's update of a ConfigMap volume (its AtomicWriter): a new hidden directory, `..data` swapped to it, the old one removed. */
async function kubeletVolume(root: string): Promise<(text: string) => Promise<void>> {
  let generation = 0;
  const publish = async (text: string) => {
    generation++;
    const dir = `..2026_11_28_00_00_0${generation}.000000001`;
    await mkdir(join(root, dir), { recursive: true });
    await writeFile(join(root, dir, 'hosts'), text);
    await symlink(dir, join(root, '..data_tmp'));
    await rename(join(root, '..data_tmp'), join(root, '..data'));
    if (generation > 1) await rm(join(root, `..2026_11_28_00_00_0${generation - 1}.000000001`), { recursive: true });
  };
  await mkdir(root);
  await publish('198.51.100.1 printer\n');
  await symlink(join('..data', 'hosts'), join(root, 'hosts'));
  return publish;
}

for (const what of ['directory (--hostsdir)', 'file through its symlink (--addn-hosts)']) {
  test(`a ConfigMap volume's update, watched as a ${what}: each ..data swap asks dnsmasq to re-read, by inotify alone`, async (t) => {
    const tmp = await tempDir('watch-hosts-');
    t.after(() => tmp.cleanup());
    const volume = join(tmp.path, 'volume');
    const publish = await kubeletVolume(volume);
    const c = calls();
    const w = watchAddnHosts([what.startsWith('dir') ? volume : join(volume, 'hosts')], c.fn, log, { pollMs: 0, debounceMs: 50 });
    t.after(() => w.close());
    await w.ready; // chokidar's initial scan: an edit during it raises no event
    for (let i = 2; i <= 6; i++) {
      const next = c.next(3000);
      await publish(`198.51.100.${i} printer\n`);
      await next;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
}

test('without inotify, the stat poll still finds an in-place edit, an atomic replace and a file added to a directory', async (t) => {
  const tmp = await tempDir('watch-hosts-');
  t.after(() => tmp.cleanup());
  const file = join(tmp.path, 'extra.hosts');
  const dir = join(tmp.path, 'hosts.d');
  await writeFile(file, '198.51.100.1 printer\n');
  await mkdir(dir);
  const c = calls();
  const w = watchAddnHosts([file, dir], c.fn, log, { pollMs: 100, debounceMs: 10, watch: noInotify });
  t.after(() => w.close());

  await new Promise((r) => setTimeout(r, 350));
  assert.equal(c.count(), 0, 'nothing changed, no reload');

  let next = c.next(3000);
  await writeFile(file, '198.51.100.22 printer\n'); // size changes
  await next;

  next = c.next(3000);
  await writeFile(join(tmp.path, 'new.hosts'), '198.51.100.3 printer\n');
  await rename(join(tmp.path, 'new.hosts'), file); // same size, new inode: a kubelet-style replace
  await next;

  next = c.next(3000);
  await writeFile(join(dir, 'more'), '198.51.100.4 scanner\n');
  await next;
  assert.equal(c.count(), 3);
});

test('the fingerprint tells a missing path from an empty file', async (t) => {
  const tmp = await tempDir('watch-hosts-');
  t.after(() => tmp.cleanup());
  const file = join(tmp.path, 'h');
  const missing = hostsFingerprint([file]);
  await writeFile(file, '');
  assert.notEqual(hostsFingerprint([file]), missing);
});
