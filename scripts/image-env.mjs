// The environment the images give every process (images/Dockerfile, stage `runtime`: its ENV
// lines, PATH left out), for the bench's processes: the bench runs the pod as the images run it,
// under the container's own env from the manifest. An image path that the Dockerfile fills from
// the build (COPY --from=bundles /app/<path> /rootfs/<image path>: LD_PRELOAD's library) is
// mapped to that file in this checkout, which `npm run build` writes.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

export function imageEnv() {
  const dockerfile = readFileSync(join(root, 'images', 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
  const stage = (name) => dockerfile.split(/^FROM /m).find((s) => new RegExp(`^\\S+ AS ${name}\\n`).test(s)) ?? '';
  // ${NAME} in a value: the ARG's default (ARG NAME=value)
  const args = new Map([...dockerfile.matchAll(/^ARG (\w+)=(\S*)$/gm)].map(([, k, v]) => [k, v]));
  const fromBuild = new Map();
  for (const [, src, dest] of stage('rootfs').matchAll(/^COPY --from=bundles \/app\/(\S+) \/rootfs(\/\S+)$/gm)) fromBuild.set(dest, src);
  const env = {};
  for (const [, pairs] of stage('runtime').matchAll(/^ENV (.+)$/gm)) {
    for (const [, k, v] of pairs.matchAll(/(\w+)=(\S*)/g)) {
      if (k === 'PATH') continue;
      const local = fromBuild.get(v);
      if (local !== undefined) {
        const file = join(root, local);
        if (!existsSync(file)) throw new Error(`${local} is missing (the images' ${k}): run npm run build`);
        env[k] = file;
      } else {
        env[k] = v.replace(/\$\{(\w+)\}/g, (_, a) => args.get(a) ?? '');
      }
    }
  }
  return env;
}
