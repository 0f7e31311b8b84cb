// Atomic file replacement: dnsmasq must never read a half-written servers or hosts file. The
// temporary file starts with a dot because dnsmasq's --hostsdir watcher ignores dot files.
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

let counter = 0;

/** A temporary file of writeFileAtomic, left by a process that died mid-write (prepareStateDir). */
export const TEMPORARY_FILE = /^\..+\.\d+\.\d+\.tmp$/;

export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${counter++}.tmp`);
  try {
    const fh = await open(tmp, 'w', 0o644);
    try {
      await fh.writeFile(text);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    // a full volume fails the write or the sync: the temporary file goes too, or every retry
    // (each -syncInterval) would leave one behind
    await rm(tmp, { force: true });
    throw e;
  }
}
