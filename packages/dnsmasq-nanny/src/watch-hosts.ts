// Operator-passed --addn-hosts files and directories: dnsmasq re-reads them only on SIGHUP, so
// we watch them and signal on change, and an edit is served within a second or so. The same for
// an operator's --hostsdir, whose inotify in dnsmasq misses a ConfigMap volume's updates
// (dnsmasq-args.ts).
//
// inotify alone is not enough: chokidar's initial scan is asynchronous (an edit made during it
// raises no event), and a node that has run out of inotify instances or watches gives none at
// all. So a poll compares the files' stats every `pollMs` as a backstop, as the ConfigMap
// directory's periodic sync does.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import type { Logger } from '@kube-dns/config';

export interface HostsWatcher {
  /**
   * Resolves once chokidar's initial scan is done (from then on an edit raises an event), when the
   * watch fails (the poll alone is left), at close, or after 5 s at most.
   */
  ready: Promise<void>;
  close(): Promise<void>;
}

export interface WatchHostsOptions {
  /** Quiet time after the last event before dnsmasq is signalled. */
  debounceMs?: number;
  /** Period of the stat backstop; 0 turns it off. */
  pollMs: number;
  /** chokidar's watch, replaceable by tests that simulate a node without inotify. */
  watch?: typeof watch;
}

/** What tells an edit apart: inode (atomic renames), size and mtime of each file; for a directory, of each entry. */
export function hostsFingerprint(paths: readonly string[]): string {
  const one = (p: string): string => {
    try {
      const s = statSync(p);
      if (!s.isDirectory()) return `${s.ino}:${s.size}:${s.mtimeMs}`;
      return readdirSync(p)
        .sort()
        .map((name) => `${name}=${one(join(p, name))}`)
        .join(',');
    } catch {
      return '-';
    }
  };
  return paths.map(one).join('|');
}

export function watchAddnHosts(paths: readonly string[], onChange: () => void, log: Logger, o: WatchHostsOptions): HostsWatcher {
  if (paths.length === 0) return { ready: Promise.resolve(), close: async () => {} };
  const debounceMs = o.debounceMs ?? 200;
  let timer: NodeJS.Timeout | undefined;
  let seen = hostsFingerprint(paths);
  const changed = (how: string) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      seen = hostsFingerprint(paths);
      log.info({ paths, how }, 'an --addn-hosts or --hostsdir file changed: asking dnsmasq to re-read it');
      onChange();
    }, debounceMs);
  };
  const watcher: FSWatcher = (o.watch ?? watch)([...paths], { ignoreInitial: true, depth: 0, atomic: true });
  watcher.on('all', (event, path) => {
    log.debug({ event, path }, 'addn-hosts change');
    changed('watch');
  });
  let readyNow: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    const giveUp = setTimeout(resolve, 5000);
    giveUp.unref();
    readyNow = () => (clearTimeout(giveUp), resolve());
  });
  watcher.once('ready', () => readyNow());
  watcher.on('error', (e) => {
    readyNow();
    log.warn({ err: (e as Error).message, pollMs: o.pollMs }, 'cannot watch --addn-hosts files; edits are found by polling');
  });
  const poll =
    o.pollMs > 0
      ? setInterval(() => {
          if (!timer && hostsFingerprint(paths) !== seen) changed('poll');
        }, o.pollMs)
      : undefined;
  poll?.unref();
  return {
    ready,
    close: async () => {
      readyNow();
      if (timer) clearTimeout(timer);
      if (poll) clearInterval(poll);
      await watcher.close();
    },
  };
}
