// bench/results/latest.json holds one top-level key per bench script ("dns" for scripts/bench.mjs,
// "memory" / "footprint" for the memory part): each script replaces its own section and keeps the
// others, so the scripts can run separately and in any order.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const RESULTS_DIR = join(new URL('..', import.meta.url).pathname, 'bench', 'results');
export const LATEST = join(RESULTS_DIR, 'latest.json');

export async function readResults() {
  try {
    return JSON.parse(await readFile(LATEST, 'utf8'));
  } catch (e) {
    if (e.code === 'ENOENT') return {};
    throw new Error(`${LATEST}: ${e.message}`);
  }
}

/** Replaces section `name` of latest.json with `data`, keeping every other section. */
export async function writeSection(name, data) {
  await mkdir(RESULTS_DIR, { recursive: true });
  const all = await readResults();
  all[name] = data;
  const tmp = `${LATEST}.tmp`;
  await writeFile(tmp, JSON.stringify(all, null, 2) + '\n');
  await rename(tmp, LATEST);
  return all;
}
