// Writes a directory the way the kubelet's AtomicWriter maintains a ConfigMap volume:
//   key -> ..data/key, ..data -> ..2026_11_22_<n>, and an update is a new hidden directory
//   published by renaming a fresh `..data_tmp` symlink over `..data` (one atomic step).
import { mkdir, readlink, rename, rm, symlink, writeFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

let generation = 0;

export async function writeKubeletConfigMap(dir: string, data: Record<string, string | Buffer>): Promise<void> {
  await mkdir(dir, { recursive: true });
  const stamp = `..2026_11_22_10_00_00.${process.pid}${String(++generation).padStart(6, '0')}`;
  await mkdir(join(dir, stamp));
  for (const [key, content] of Object.entries(data)) await writeFile(join(dir, stamp, key), content);

  let previous: string | undefined;
  try {
    previous = await readlink(join(dir, '..data'));
  } catch {
    previous = undefined;
  }
  await symlink(stamp, join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data'));

  const visible = (await readdir(dir)).filter((n) => !n.startsWith('.'));
  for (const key of Object.keys(data)) {
    if (!visible.includes(key)) await symlink(join('..data', key), join(dir, key));
  }
  for (const name of visible) {
    if (!(name in data)) await rm(join(dir, name));
  }
  if (previous) await rm(join(dir, previous), { recursive: true, force: true });
}
