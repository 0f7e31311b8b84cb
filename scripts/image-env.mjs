// What the images give every process, read from images/Dockerfile for the bench's processes, so
// that the bench runs the pod as the images run it: node's flags (each image's ENTRYPOINT) and the
// environment (the ENV lines of stage `runtime` and then of the image's own stage, PATH left out;
// the container's own env from the manifest goes over it). An image path that the Dockerfile fills
// from the build (COPY --from=bundles /app/<path> /rootfs/<image path>: LD_PRELOAD's library) is
// mapped to that file in this checkout, which `npm run build` writes. A library LD_PRELOAD names
// without a path (libjemalloc.so.2) is the host's, which must have it: the loader would otherwise
// skip it with a warning, and the bench would measure another allocator than the image's.
import { execFileSync } from 'node:child_process';
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

/** Libraries the host's loader finds by name (ldconfig's cache; ldconfig is off a user's PATH). */
function hostLibraries() {
  for (const ldconfig of ['ldconfig', '/usr/sbin/ldconfig', '/sbin/ldconfig']) {
    try {
      return new Set([...execFileSync(ldconfig, ['-p'], { encoding: 'utf8' }).matchAll(/^\s+(\S+) \(/gm)].map((m) => m[1]));
    } catch {
      /* the next */
    }
  }
  return new Set();
}

/** The env of `image` (kube-dns, dnsmasq-nanny or sidecar) as its Dockerfile target sets it. */
export function imageEnv(image) {
  const { text: dockerfileText, stage } = dockerfile();
  if (!stage(image)) throw new Error(`images/Dockerfile: no target ${image}`);
  // ${NAME} in a value: the ARG's default (ARG NAME=value)
  const args = new Map([...dockerfileText.matchAll(/^ARG (\w+)=(\S*)$/gm)].map(([, k, v]) => [k, v]));
  const fromBuild = new Map();
  for (const [, src, dest] of stage('rootfs').matchAll(/^COPY --from=bundles \/app\/(\S+) \/rootfs(\/\S+)$/gm)) fromBuild.set(dest, src);
  const local = (k, v) => {
    const src = fromBuild.get(v);
    if (src === undefined) return v;
    const file = join(root, src);
    if (!existsSync(file)) throw new Error(`${src} is missing (the images' ${k}): run npm run build`);
    return file;
  };
  const env = {};
  for (const [, pairs] of [...stage('runtime').matchAll(/^ENV (.+)$/gm), ...stage(image).matchAll(/^ENV (.+)$/gm)]) {
    for (const [, k, v] of pairs.matchAll(/(\w+)=(\S*)/g)) {
      if (k === 'PATH') continue;
      const value = v.replace(/\$\{(\w+)\}/g, (_, a) => {
        // an ARG with no default is set only by a build argument, which the bench does not pass:
        // an empty value would run the process unlike its image, and silently
        if (!args.has(a)) throw new Error(`images/Dockerfile: ENV ${k} uses \${${a}}, which has no ARG default (ARG ${a}=...) to take`);
        return args.get(a);
      });
      env[k] = k === 'LD_PRELOAD' ? value.split(':').map((p) => local(k, p)).join(':') : local(k, value);
    }
  }
  const byName = (env.LD_PRELOAD ?? '').split(':').filter((p) => p && !p.includes('/'));
  if (byName.length > 0) {
    const have = hostLibraries();
    const missing = byName.filter((l) => !have.has(l));
    if (missing.length > 0) throw new Error(`the ${image} image preloads ${missing.join(', ')}, which this machine lacks: scripts/install.sh --with-bench installs it as root (Debian's libjemalloc2)`);
  }
  return env;
}
