// What the images give every process, read from images/Dockerfile for the bench's processes, so
// that the bench runs the pod as the images run it: node's flags (each image's ENTRYPOINT) and the
// environment (stage `runtime`: its ENV lines, PATH left out; the container's own env from the
// manifest goes over it). An image path that the Dockerfile fills from the build (COPY
// --from=bundles /app/<path> /rootfs/<image path>: LD_PRELOAD's library) is mapped to that file in
// this checkout, which `npm run build` writes.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');

/** images/Dockerfile with its continuation lines joined, and one of its stages' text by name. */
function dockerfile() {
  const text = readFileSync(join(root, 'images', 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ');
  return { text, stage: (name) => text.split(/^FROM /m).find((s) => new RegExp(`^\\S+ AS ${name}\\n`).test(s)) ?? '' };
}

/**
 * The flags the image's ENTRYPOINT gives node (target `image`): those node refuses in
 * NODE_OPTIONS live there, and the bench runs what the images run.
 */
export function imageFlags(image) {
  const entry = JSON.parse(/^ENTRYPOINT (\[.*\])$/m.exec(dockerfile().stage(image))?.[1] ?? 'null');
  if (!entry) throw new Error(`images/Dockerfile: no ENTRYPOINT for ${image}`);
  return entry.slice(entry.indexOf('/usr/local/bin/node') + 1, -1);
}

export function imageEnv() {
  const { text: dockerfileText, stage } = dockerfile();
  // ${NAME} in a value: the ARG's default (ARG NAME=value)
  const args = new Map([...dockerfileText.matchAll(/^ARG (\w+)=(\S*)$/gm)].map(([, k, v]) => [k, v]));
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
