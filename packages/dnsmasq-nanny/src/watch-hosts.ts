// Operator-passed --addn-hosts files and directories: dnsmasq re-reads them only on SIGHUP, so
// we watch them and signal on change, and an edit is served within a second or so. (Files in a
// --hostsdir need nothing: dnsmasq follows those itself.)
import { type FSWatcher, watch } from 'chokidar';
import type { Logger } from '@kube-dns/config';

export interface HostsWatcher {
  close(): Promise<void>;
}

export function watchAddnHosts(paths: readonly string[], onChange: () => void, log: Logger, debounceMs = 200): HostsWatcher {
  if (paths.length === 0) return { close: async () => {} };
  let timer: NodeJS.Timeout | undefined;
  const watcher: FSWatcher = watch([...paths], { ignoreInitial: true, depth: 0, atomic: true });
  watcher.on('all', (event, path) => {
    log.debug({ event, path }, 'addn-hosts change');
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      log.info({ paths }, 'an --addn-hosts file changed: asking dnsmasq to re-read it');
      onChange();
    }, debounceMs);
  });
  watcher.on('error', (e) => log.warn({ err: (e as Error).message }, 'cannot watch --addn-hosts files; edits apply on the next reload'));
  return {
    close: async () => {
      if (timer) clearTimeout(timer);
      await watcher.close();
    },
  };
}
