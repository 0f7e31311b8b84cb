// Reads the kube-dns ConfigMap mounted as a directory and follows its changes.
//
// A kubelet updates a ConfigMap volume by writing a new hidden timestamped directory and
// swapping the `..data` symlink; the visible keys are symlinks through `..data`. We watch the
// whole directory (hidden entries included) with chokidar so the swap is seen at once, and poll
// every `periodMs` as a safety net for file systems where events are lost.
import { EventEmitter } from 'node:events';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { CONFIG_KEYS, type ConfigError, ERRORS_TOLD, type KubeDnsConfig, defaultConfig, describeErrors, parseConfig } from './configmap.js';
import type { Logger } from './log.js';

export interface DirSnapshot {
  /** File name → content, for visible regular files (symlinks followed). */
  data: Record<string, string>;
  /** A 64-bit FNV-1a hash (16 hex digits) over `name \0 content \0` in name order; "" when there are no files. */
  version: string;
}

/**
 * FNV-1a, 64 bits, over UTF-16 code units, in two 32-bit halves (no BigInt). A version only has to
 * change when the files do: a ConfigMap is edited by people allowed to edit it, so nothing
 * adversarial is being hashed, and a 64-bit hash collides once in 2^64 edits. Not sha256 from
 * node:crypto: loading node's crypto costs a process about 2.2 MB, and the nanny needs it for
 * nothing else.
 */
class Fnv1a64 {
  // the offset basis 0xcbf29ce484222325, high and low halves
  private hi = 0xcbf29ce4;
  private lo = 0x84222325;

  update(text: string): this {
    for (let i = 0; i < text.length; i++) {
      this.lo ^= text.charCodeAt(i);
      // multiply by the FNV prime 2^40 + 0x1b3, modulo 2^64: lo * 0x1b3 (with its carry into hi)
      // plus hi * 0x1b3 plus lo << 40 (which only reaches hi, as lo << 8)
      const lo = this.lo;
      const loProd = (lo & 0xffff) * 0x1b3;
      const midProd = (lo >>> 16) * 0x1b3 + (loProd >>> 16);
      this.lo = ((midProd & 0xffff) << 16) | (loProd & 0xffff);
      this.hi = (Math.imul(this.hi, 0x1b3) + (midProd >>> 16) + (lo << 8)) | 0;
      this.lo >>>= 0;
    }
    return this;
  }

  hex(): string {
    return (this.hi >>> 0).toString(16).padStart(8, '0') + (this.lo >>> 0).toString(16).padStart(8, '0');
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** One read of the directory, the original's rules: hidden names and sub-directories skipped. */
export async function readConfigDir(dir: string): Promise<DirSnapshot> {
  return (await readDir(dir)).snap;
}

/**
 * readConfigDir, and which directory it read: its device, inode and birth time. A directory
 * replaced by another has another inode, or the same number again (ext4 hands a directory made
 * right after one was removed its number): the birth time tells those apart.
 */
async function readDir(dir: string): Promise<{ snap: DirSnapshot; ident: string }> {
  const st = await stat(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  const names = (await readdir(dir)).filter((n) => !n.startsWith('.')).sort();
  const data: Record<string, string> = {};
  const hash = new Fnv1a64();
  for (const name of names) {
    const path = join(dir, name);
    let s;
    try {
      s = await stat(path);
    } catch {
      continue; // a dangling symlink in the middle of a kubelet swap
    }
    if (!s.isFile()) continue;
    const bytes = await readFile(path);
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      throw new Error(`${path} is not valid UTF-8`);
    }
    data[name] = text;
    hash.update(name).update('\0').update(text).update('\0');
  }
  return { snap: { data, version: names.length && Object.keys(data).length ? hash.hex() : '' }, ident: `${st.dev}:${st.ino}:${st.birthtimeMs}` };
}

export interface ConfigSourceEvents {
  /** A new valid config (also the first one, defaults included). */
  config: [KubeDnsConfig];
  /** A changed but invalid config: the last good one stays in force. */
  rejected: [{ version: string; errors: ConfigError[] }];
  /** The directory could not be read after start (only emitted when someone listens). */
  error: [Error];
}

export interface ConfigDirSourceOptions {
  dir: string;
  /** Safety-net poll period (the original's --config-period / -syncInterval); 0: none, file events only. */
  periodMs: number;
  log: Logger;
  /** Debounce for file events: a kubelet swap is several events. */
  debounceMs?: number;
  /** Use file events as well as polling (default true). */
  watchEvents?: boolean;
}

/**
 * Emits `config` once at start (the directory's config, or the defaults when it is missing or
 * invalid) and then for every valid change; `rejected` for an invalid change.
 */
export class ConfigDirSource extends EventEmitter<ConfigSourceEvents> {
  private current: KubeDnsConfig = defaultConfig();
  private lastSeenVersion: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private watcher: FSWatcher | undefined;
  private loading: Promise<void> = Promise.resolve();
  private stopped = false;
  /** The directory was found missing: file events on it are dead until it is watched anew. */
  private dirGone = false;
  /** The device, inode and birth time of the directory last read: others mean it was replaced, and its watch is dead. */
  private dirIdent: string | undefined;
  private unblockStart: (() => void) | undefined;
  reloads = 0;
  rejects = 0;

  constructor(private readonly opts: ConfigDirSourceOptions) {
    super();
  }

  /** The config in force. */
  get config(): KubeDnsConfig {
    return this.current;
  }

  /** Loads once (emitting `config`), then follows changes. Resolves after the first load. */
  async start(): Promise<KubeDnsConfig> {
    await this.load(true);
    if (this.stopped) return this.current;
    // 0: no poll, file events only (the original's ticker of 0 never fired: it read the
    // directory once). A setInterval of 0 would read it a thousand times a second.
    if (this.opts.periodMs > 0) {
      this.timer = setInterval(() => this.schedule(0), this.opts.periodMs);
      this.timer.unref();
    }
    if (this.opts.watchEvents !== false) {
      this.watcher = this.watchDir();
      // Until its first scan is done chokidar does not know the files, so it would not report
      // their removal; and anything changed between the first load and now must not wait a poll.
      // Bounded: a watcher that never gets ready (or a stop() meanwhile) must not block startup.
      await new Promise<void>((resolve) => {
        const giveUp = setTimeout(resolve, 5000);
        giveUp.unref();
        this.unblockStart = resolve;
        this.watcher!.once('ready', () => (clearTimeout(giveUp), resolve()));
      });
      this.unblockStart = undefined;
      if (this.stopped) return this.current;
      this.schedule(0);
    }
    return this.current;
  }

  private watchDir(): FSWatcher {
    const w = watch(this.opts.dir, { ignoreInitial: true, depth: 1, followSymlinks: false });
    w.on('all', () => this.schedule(this.opts.debounceMs ?? 100));
    w.on('error', (e) => this.opts.log.warn({ err: e }, 'config directory watch error; polling continues'));
    return w;
  }

  /**
   * A directory removed and created again (or created after start), or another moved into its
   * place (found by the poll: its inode differs), is a new inode: the watch
   * of the old one reports nothing, and every edit would wait for the poll. Watch it anew, and
   * read it again once that watch has listed it: a file written between our read and its
   * listing is one it takes for already there, and reports no change of.
   */
  private rewatch(): void {
    this.dirGone = false;
    if (!this.watcher || this.stopped) return;
    const old = this.watcher;
    this.watcher = this.watchDir();
    this.watcher.once('ready', () => this.schedule(0));
    void old.close();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.debounce) clearTimeout(this.debounce);
    this.unblockStart?.();
    await this.watcher?.close();
    await this.loading;
  }

  /** Re-reads now (tests, SIGHUP). Never rejects: a failed read is logged and reported as `error`. */
  reload(): Promise<void> {
    // A rejected link would make every later reload skip its load: the source would go deaf.
    this.loading = this.loading.then(() => this.load(false)).catch((e: unknown) => {
      this.opts.log.error({ dir: this.opts.dir, err: (e as Error).message }, 'config reload failed, keeping the last good config');
    });
    return this.loading;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    if (this.debounce) clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.reload(), delay);
    this.debounce.unref();
  }

  private async load(initial: boolean): Promise<void> {
    if (this.stopped && !initial) return;
    const { dir, log } = this.opts;
    let snap: DirSnapshot;
    let ident: string;
    try {
      ({ snap, ident } = await readDir(dir));
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === 'ENOENT') this.dirGone = true;
      if (initial) {
        const missing = err.code === 'ENOENT';
        log[missing ? 'info' : 'error'](
          { dir, err: err.message },
          missing ? 'config directory does not exist, starting with default values' : 'cannot read config directory, starting with default values',
        );
        this.lastSeenVersion = '';
        this.emit('config', this.current);
      } else if (err.code !== 'ENOENT' || this.lastSeenVersion !== '') {
        log.error({ dir, err: err.message }, 'cannot read config directory, keeping the last good config');
        // An 'error' event nobody listens to throws: a bad file in the ConfigMap must not kill the process.
        if (this.listenerCount('error') > 0) this.emit('error', err);
      }
      return;
    }
    // (the first read comes before any watch: nothing to compare with yet)
    if (this.dirGone || (this.dirIdent !== undefined && ident !== this.dirIdent)) this.rewatch();
    this.dirIdent = ident;
    if (snap.version === this.lastSeenVersion) return;
    this.lastSeenVersion = snap.version;
    const result = parseConfig(snap.data, snap.version);
    if (!result.ok) {
      this.rejects++;
      log.error(
        { dir, version: snap.version, errors: result.errors.slice(0, ERRORS_TOLD), errorCount: result.errors.length },
        initial
          ? `Invalid configuration at start, running with the default values until it is fixed: ${describeErrors(result.errors)}`
          : `Invalid configuration, ignoring update and keeping the last good config: ${describeErrors(result.errors)}`,
      );
      this.emit('rejected', { version: snap.version, errors: result.errors });
      if (initial) this.emit('config', this.current);
      return;
    }
    this.current = result.config;
    if (!initial) this.reloads++;
    for (const k of Object.keys(snap.data)) {
      if (!CONFIG_KEYS.includes(k)) log.warn({ key: k }, 'unknown ConfigMap key ignored');
    }
    if (result.config.federations.size > 0) log.warn('the federations key is obsolete: it is accepted but has no effect');
    log.info({ version: snap.version, keys: Object.keys(snap.data) }, initial ? 'config loaded' : 'config updated');
    this.emit('config', this.current);
  }
}
