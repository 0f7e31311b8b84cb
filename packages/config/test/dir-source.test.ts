// The ConfigMap mounted as a directory: the original's read rules (as in the kubernetes/dns tests) and the
// way a kubelet updates such a volume.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ConfigDirSourceOptions, type KubeDnsConfig, ConfigDirSource, createLogger, readConfigDir, silentLogger } from '../src/index.js';
import { writeKubeletConfigMap } from './kubelet-volume.js';

async function tempDir(t: TestContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kube-dns-config-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** FNV-1a 64 over UTF-16 code units, written with BigInt: an oracle independent of the code's 32-bit halves. */
const fnv1a64 = (s: string) => {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < s.length; i++) h = ((h ^ BigInt(s.charCodeAt(i))) * 0x100000001b3n) & 0xffffffffffffffffn;
  return h.toString(16).padStart(16, '0');
};

test('the oracle is FNV-1a 64: the published vectors', () => {
  assert.equal(fnv1a64(''), 'cbf29ce484222325');
  assert.equal(fnv1a64('a'), 'af63dc4c8601ec8c');
  assert.equal(fnv1a64('foobar'), '85944171f73967e8');
});

async function startSource(t: TestContext, opts: Partial<ConfigDirSourceOptions> & { dir: string }) {
  const source = new ConfigDirSource({ periodMs: 60_000, log: silentLogger(), ...opts });
  const configs: KubeDnsConfig[] = [];
  const rejected: { version: string; errors: { key: string; reason: string }[] }[] = [];
  source.on('config', (c) => configs.push(c));
  source.on('rejected', (r) => rejected.push(r));
  t.after(() => source.stop());
  await source.start();
  return { source, configs, rejected };
}

/** Resolves with the first `event` whose payload satisfies `pred`; rejects after `timeoutMs`. */
function nextEvent<T>(source: ConfigDirSource, event: 'config' | 'rejected', pred: (v: T) => boolean, timeoutMs: number): Promise<T> {
  const emitter = source as unknown as NodeJS.EventEmitter;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, on);
      reject(new Error(`no matching '${event}' event within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (v: T) => {
      if (!pred(v)) return;
      clearTimeout(timer);
      emitter.off(event, on);
      resolve(v);
    };
    emitter.on(event, on);
  });
}

const upstreams = (c: KubeDnsConfig) => c.upstreamNameservers.map((n) => n.raw);

test('readConfigDir: a missing path or a plain file is an error', async (t) => {
  const dir = await tempDir(t);
  await assert.rejects(readConfigDir(join(dir, 'missing')), { code: 'ENOENT' });
  await writeFile(join(dir, 'file'), 'x');
  await assert.rejects(readConfigDir(join(dir, 'file')), /is not a directory/);
});

test('readConfigDir: an empty directory has version "" and no data; sub-directories and hidden files are ignored', async (t) => {
  const dir = await tempDir(t);
  assert.deepEqual(await readConfigDir(dir), { data: {}, version: '' });
  await mkdir(join(dir, 'subdir'));
  await writeFile(join(dir, 'subdir', 'upstreamNameservers'), '["1.1.1.1"]');
  await writeFile(join(dir, '.hiddenfile'), 'data');
  assert.deepEqual(await readConfigDir(dir), { data: {}, version: '' });
});

test('readConfigDir: content must be UTF-8; the error names the file', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'stubDomains'), Buffer.from([0x7b, 0xc0, 0x7d]));
  await assert.rejects(readConfigDir(dir), new RegExp(`${join(dir, 'stubDomains')} is not valid UTF-8`));
});

test('readConfigDir: data by file name, version = FNV-1a 64 of name\\0content\\0 in name order', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'file2'), 'data2');
  await writeFile(join(dir, 'file1'), 'data1');
  assert.deepEqual(await readConfigDir(dir), {
    data: { file1: 'data1', file2: 'data2' },
    version: fnv1a64('file1\0data1\0file2\0data2\0'),
  });
  await rm(join(dir, 'file1'));
  await writeFile(join(dir, 'file3'), 'data3');
  assert.deepEqual(await readConfigDir(dir), {
    data: { file2: 'data2', file3: 'data3' },
    version: fnv1a64('file2\0data2\0file3\0data3\0'),
  });
  // beyond Latin-1, and long enough for the halves' carries to matter
  const text = '{"example.com": ["1.2.3.4"]} ünïcødé ☃ 𝄞 '.repeat(40);
  await writeFile(join(dir, 'file3'), text);
  assert.equal((await readConfigDir(dir)).version, fnv1a64(`file2\0data2\0file3\0${text}\0`));
});

test('readConfigDir: a kubelet volume reads through its symlinks and skips the hidden ..data entries', async (t) => {
  const dir = await tempDir(t);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["8.8.8.8"]', federations: 'a=b.c' });
  const snap = await readConfigDir(dir);
  assert.deepEqual(snap.data, { federations: 'a=b.c', upstreamNameservers: '["8.8.8.8"]' });
  assert.equal(snap.version, fnv1a64('federations\0a=b.c\0upstreamNameservers\0["8.8.8.8"]\0'));
});

test('a missing directory starts with the defaults (one config event, version "")', async (t) => {
  const dir = await tempDir(t);
  const { source, configs, rejected } = await startSource(t, { dir: join(dir, 'absent') });
  assert.equal(configs.length, 1);
  assert.equal(configs[0]!.version, '');
  assert.deepEqual(upstreams(source.config), []);
  assert.equal(rejected.length, 0);
});

test('a directory that appears after start is picked up', async (t) => {
  const dir = join(await tempDir(t), 'late');
  const errors: Error[] = [];
  const source = new ConfigDirSource({ dir, periodMs: 100, log: silentLogger() });
  source.on('error', (e) => errors.push(e));
  t.after(() => source.stop());
  await source.start();
  const applied = nextEvent<KubeDnsConfig>(source, 'config', (c) => upstreams(c).length > 0, 30_000);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["8.8.8.8"]' });
  await applied;
  assert.deepEqual(errors, [], 'a directory still missing is not an error to report on every poll');
});

test('an invalid directory at start: rejected is reported and the defaults are in force', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'upstreamNameservers'), '["1.1.1.1", "not-an-ip"]');
  const lines: string[] = [];
  const { source, configs, rejected } = await startSource(t, { dir, log: createLogger('config-test', 2, 'info', (line) => lines.push(line)) });
  assert.equal(rejected.length, 1);
  assert.deepEqual(rejected[0]!.errors, [{ key: 'upstreamNameservers', reason: '"not-an-ip" is not an IP address or IP:port' }]);
  assert.equal(configs.length, 1);
  assert.deepEqual(upstreams(source.config), []);
  // there is no last good config to keep at start: the log says what is in force instead
  const said = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((l) => l.level === 50);
  assert.equal(said.length, 1);
  assert.match(said[0]!.msg, /^Invalid configuration at start, running with the default values until it is fixed: upstreamNameservers: /);
});

test('a non-UTF-8 file at start means defaults; appearing later it is an error that keeps the last good config', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'upstreamNameservers'), Buffer.from([0xc0]));
  const { source } = await startSource(t, { dir, watchEvents: false });
  assert.equal(source.config.version, '');

  await writeFile(join(dir, 'upstreamNameservers'), '["8.8.8.8"]');
  await source.reload();
  assert.deepEqual(upstreams(source.config), ['8.8.8.8']);

  const errors: Error[] = [];
  source.on('error', (e) => errors.push(e));
  await writeFile(join(dir, 'upstreamNameservers'), Buffer.from([0x5b, 0xff, 0x5d]));
  await source.reload();
  assert.match(errors[0]?.message ?? '', /upstreamNameservers is not valid UTF-8/);
  assert.deepEqual(upstreams(source.config), ['8.8.8.8']);

  // Without an 'error' listener the same failure must neither throw nor stop later reloads.
  source.removeAllListeners('error');
  await source.reload();
  await writeFile(join(dir, 'upstreamNameservers'), '["8.8.4.4"]');
  await source.reload();
  assert.deepEqual(upstreams(source.config), ['8.8.4.4']);
});

test('a kubelet ConfigMap update (..data symlink swap) is applied through the file watcher', async (t) => {
  const dir = await tempDir(t);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["8.8.8.8"]' });
  // The poll period is far beyond the wait below: only the watcher can deliver the change.
  const { source, configs } = await startSource(t, { dir, periodMs: 60_000 });
  assert.deepEqual(upstreams(source.config), ['8.8.8.8']);

  const applied = nextEvent<KubeDnsConfig>(source, 'config', (c) => upstreams(c).includes('9.9.9.9'), 30_000);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["9.9.9.9", "1.1.1.1:5353"]', stubDomains: '{"acme.local": ["10.0.0.53"]}' });
  const c = await applied;
  assert.deepEqual(upstreams(c), ['9.9.9.9', '1.1.1.1:5353']);
  assert.deepEqual([...c.stubDomains.keys()], ['acme.local']);
  assert.deepEqual(source.config, c);
  assert.equal(source.reloads, 1);

  // A second swap works as well (the watcher survives the removal of the old timestamped dir).
  const again = nextEvent<KubeDnsConfig>(source, 'config', (x) => upstreams(x).includes('7.7.7.7'), 30_000);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["7.7.7.7"]' });
  assert.equal((await again).stubDomains.size, 0, 'the key dropped from the ConfigMap is gone');
  assert.ok(configs.every((x) => x.upstreamNameservers.length > 0), 'no half-swapped state was published');
});

test('a directory removed and created again is watched anew: edits after it come through file events again', async (t) => {
  const dir = await tempDir(t);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["8.8.8.8"]' });
  const { source } = await startSource(t, { dir, periodMs: 60_000 });
  await rm(dir, { recursive: true, force: true });
  await source.reload(); // the poll finds it gone
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["9.9.9.9"]' });
  await source.reload(); // and back
  assert.deepEqual(upstreams(source.config), ['9.9.9.9']);
  // the poll period is far beyond the wait: only a watch of the new directory can deliver this
  await new Promise((r) => setTimeout(r, 500)); // the new watch's first scan
  const applied = nextEvent<KubeDnsConfig>(source, 'config', (c) => upstreams(c).includes('7.7.7.7'), 10_000);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["7.7.7.7"]' });
  await applied;
});

test('an edit made while the new watch of a re-created directory starts is not left for the poll', async (t) => {
  // plain files, as a directory the operator edits by hand (a kubelet swap, made of symlinks, is
  // reported by the new watch's first scan anyway)
  const dir = await tempDir(t);
  await writeFile(join(dir, 'upstreamNameservers'), '["8.8.8.8"]');
  const { source } = await startSource(t, { dir, periodMs: 60_000 });
  await rm(dir, { recursive: true, force: true });
  // the old watch reports the removal: its re-read, after the debounce, finds the directory gone
  await new Promise((r) => setTimeout(r, 500));
  await source.reload();
  await mkdir(dir);
  await writeFile(join(dir, 'upstreamNameservers'), '["9.9.9.9"]');
  // The edit lands the moment the directory is read back, before the new watch has listed it:
  // that watch takes the file for one that was already there and reports nothing.
  source.once('config', () => writeFileSync(join(dir, 'upstreamNameservers'), '["7.7.7.7"]'));
  const applied = nextEvent<KubeDnsConfig>(source, 'config', (c) => upstreams(c).includes('7.7.7.7'), 5_000);
  await source.reload(); // and back
  await applied; // the poll is a minute away
});

test('with file events off, the poll alone picks a change up', async (t) => {
  const dir = await tempDir(t);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["8.8.8.8"]' });
  const { source } = await startSource(t, { dir, watchEvents: false, periodMs: 100 });
  const applied = nextEvent<KubeDnsConfig>(source, 'config', (c) => upstreams(c).includes('9.9.9.9'), 30_000);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["9.9.9.9"]' });
  await applied;
  assert.deepEqual(upstreams(source.config), ['9.9.9.9']);
});

test('a poll period of 0 (--config-period=0) polls never, where it used to re-read the directory every millisecond; file events still apply a change', async (t) => {
  const dir = await tempDir(t);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["8.8.8.8"]' });
  const quiet = await startSource(t, { dir, watchEvents: false, periodMs: 0 });
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["9.9.9.9"]' });
  await new Promise((r) => setTimeout(r, 500));
  assert.deepEqual(upstreams(quiet.source.config), ['8.8.8.8'], 'no poll read the change');
  const watching = await startSource(t, { dir, periodMs: 0 });
  const applied = nextEvent<KubeDnsConfig>(watching.source, 'config', (c) => upstreams(c).includes('1.1.1.1'), 30_000);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["1.1.1.1"]' });
  await applied;
});

test('the keys kube-dns applies live are not reported as unknown; a key nothing reads is', async (t) => {
  const dir = await tempDir(t);
  await writeKubeletConfigMap(dir, { ignoreEmptyService: 'true', transferTo: '10.0.0.0/8', upstreamNameservers: '["8.8.8.8"]', stubDomainz: '{}' });
  const lines: string[] = [];
  const log = createLogger('config-test', 2, 'info', (line) => lines.push(line));
  const { source } = await startSource(t, { dir, log });
  assert.deepEqual(source.config.zoneOverrides, { ignoreEmptyService: true, transferTo: '10.0.0.0/8' }, 'both applied');
  const unknown = lines.map((l) => JSON.parse(l) as { msg: string; key?: string }).filter((l) => l.msg === 'unknown ConfigMap key ignored');
  assert.deepEqual(unknown.map((l) => l.key), ['stubDomainz'], 'only the misspelt key is said to be ignored');
});

test('an invalid update is rejected, the last good config stays, and reverting to it applies it again', async (t) => {
  const dir = await tempDir(t);
  const good = { upstreamNameservers: '["8.8.8.8"]', stubDomains: '{"acme.local": ["10.0.0.53"]}' };
  await writeKubeletConfigMap(dir, good);
  const lines: string[] = [];
  const log = createLogger('config-test', 2, 'info', (line) => lines.push(line));
  const { source, configs, rejected } = await startSource(t, { dir, log });
  const goodVersion = source.config.version;
  assert.notEqual(goodVersion, '');

  const rejection = nextEvent<{ version: string; errors: { key: string; reason: string }[] }>(source, 'rejected', () => true, 2000);
  await writeKubeletConfigMap(dir, { ...good, stubDomains: '{"acme.local": ["$$$$"]}' });
  const r = await rejection;
  assert.deepEqual(r.errors, [{ key: 'stubDomains', reason: 'domain "acme.local": "$$$$" is neither an IP address nor a valid host name' }]);
  assert.equal(source.config.version, goodVersion, 'the last good config stays in force');
  assert.equal(configs.length, 1);
  const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string }).find((l) => l.level === 50);
  assert.match(logged?.msg ?? '', /keeping the last good config: stubDomains: domain "acme\.local": "\$\$\$\$"/);

  const reverted = nextEvent<KubeDnsConfig>(source, 'config', () => true, 30_000);
  await writeKubeletConfigMap(dir, good);
  assert.equal((await reverted).version, goodVersion);
  assert.equal(rejected.length, 1);
  assert.equal(configs.length, 2);
});

test('deleting a key file removes that setting', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'upstreamNameservers'), '["8.8.8.8"]');
  await writeFile(join(dir, 'federations'), 'fed=example.com');
  const { source } = await startSource(t, { dir });
  assert.equal(source.config.federations.size, 1);
  const applied = nextEvent<KubeDnsConfig>(source, 'config', () => true, 30_000);
  await rm(join(dir, 'upstreamNameservers'));
  const c = await applied;
  assert.deepEqual(upstreams(c), []);
  assert.equal(c.federations.get('fed'), 'example.com');
});

test('reading the same content again publishes nothing new', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'upstreamNameservers'), '["8.8.8.8"]');
  const { source, configs } = await startSource(t, { dir, watchEvents: false });
  await source.reload();
  await source.reload();
  assert.equal(configs.length, 1);
  assert.equal(source.reloads, 0);
});

test('stop() leaves nothing running: a process that starts and stops a source exits by itself', async (t) => {
  const dir = await tempDir(t);
  await writeKubeletConfigMap(dir, { upstreamNameservers: '["8.8.8.8"]' });
  const index = new URL('../src/index.js', import.meta.url).href;
  const script = `
    import { ConfigDirSource, silentLogger } from ${JSON.stringify(index)};
    const s = new ConfigDirSource({ dir: ${JSON.stringify(dir)}, periodMs: 60000, log: silentLogger() });
    const c = await s.start();
    await s.stop();
    console.log(c.upstreamNameservers[0].host);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += String(d)));
  const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => child.on('exit', (c, s) => resolve([c, s])));
  clearTimeout(killer);
  assert.equal(signal, null, 'the process had to be killed: stop() left a handle open');
  assert.equal(code, 0);
  assert.equal(out.trim(), '8.8.8.8');
});

/**
 * A config directory holding 8.8.8.8, `replace`d by one holding 9.9.9.9 and found by a read (the
 * poll), then edited to 7.7.7.7: the poll is a minute away, so only a watch of the new directory
 * can deliver the edit.
 */
async function replacedDirIsWatched(t: TestContext, replace: (parent: string, dir: string) => Promise<void>): Promise<void> {
  const parent = await tempDir(t);
  const dir = join(parent, 'conf');
  await mkdir(dir);
  await writeFile(join(dir, 'upstreamNameservers'), '["8.8.8.8"]');
  const { source } = await startSource(t, { dir, periodMs: 60_000 });
  await new Promise((r) => setTimeout(r, 300));
  await replace(parent, dir);
  await source.reload(); // the poll reads the new directory
  assert.deepEqual(upstreams(source.config), ['9.9.9.9']);
  await new Promise((r) => setTimeout(r, 700)); // the new watch's first scan
  const applied = nextEvent<KubeDnsConfig>(source, 'config', (c) => upstreams(c).includes('7.7.7.7'), 5_000);
  await writeFile(join(dir, 'upstreamNameservers'), '["7.7.7.7"]');
  await applied;
}

test('a directory replaced by another in its place (moved over) is watched anew once a read finds it', async (t) => {
  // `mv conf conf.old && mv conf.new conf`: the directory is never missing, so nothing said its
  // watch was dead (the old directory's, which hears nothing of the new one), and every later
  // edit waited for the poll
  await replacedDirIsWatched(t, async (parent, dir) => {
    await mkdir(join(parent, 'conf.new'));
    await writeFile(join(parent, 'conf.new', 'upstreamNameservers'), '["9.9.9.9"]');
    await rename(dir, join(parent, 'conf.old'));
    await rename(join(parent, 'conf.new'), dir);
  });
});

test('a directory removed and made again between two reads (its inode number given again) is watched anew', async (t) => {
  // rm -rf conf && mkdir conf: ext4 hands the new directory the old one's inode number, so the
  // poll took it for the one watched, and the dead watch was kept: later edits waited for the poll
  await replacedDirIsWatched(t, async (_parent, dir) => {
    await rm(dir, { recursive: true });
    await mkdir(dir);
    await writeFile(join(dir, 'upstreamNameservers'), '["9.9.9.9"]');
  });
});
