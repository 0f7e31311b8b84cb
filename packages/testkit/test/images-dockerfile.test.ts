// images/Dockerfile read as text: what holds for both ways of building it (`docker build` with a
// registry; scripts/images.sh with podman and no registry, which images-e2e.test.ts builds and
// runs). The registry way cannot be built here: these checks are what guards it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';

const ROOT = new URL('../../../../', import.meta.url).pathname;
const DOCKERFILE = 'images/Dockerfile';
type Obj = Record<string, any>;

interface Stage {
  from: string;
  lines: string[];
}

/** Global ARGs (before the first FROM) and the stages by name, lines without comments or continuations. */
function parse(file: string): { args: Map<string, string>; stages: Map<string, Stage> } {
  const logical = readFileSync(join(ROOT, file), 'utf8')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const args = new Map<string, string>();
  const stages = new Map<string, Stage>();
  let current: Stage | undefined;
  for (const l of logical) {
    const m = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(l);
    if (m) {
      current = { from: m[1]!, lines: [] };
      stages.set(m[2] ?? `#${stages.size}`, current);
    } else if (current) current.lines.push(l);
    else {
      const a = /^ARG\s+([A-Z_]+)=(\S+)$/.exec(l);
      if (a) args.set(a[1]!, a[2]!);
    }
  }
  return { args, stages };
}

/** A target's environment: the ENV lines of the stages it is built FROM, then its own (${ARG}s at their defaults). */
function imageEnv(stages: Map<string, Stage>, target: string, args: Map<string, string>): Map<string, string> {
  const env = new Map<string, string>();
  for (const l of targetLines(stages, target).filter((x) => x.startsWith('ENV '))) {
    for (const [, k, v] of l.matchAll(/(\w+)=(\S*)/g)) env.set(k!, v!.replace(/\$\{(\w+)\}/g, (_, a: string) => args.get(a) ?? ''));
  }
  return env;
}

/** What a target ends up with: its own lines after those of the stages it is built FROM. */
function targetLines(stages: Map<string, Stage>, target: string): string[] {
  const stage = stages.get(target);
  assert.ok(stage, `${DOCKERFILE} has a target ${target}`);
  return [...(stages.has(stage.from) ? targetLines(stages, stage.from) : []), ...stage.lines];
}

const deployment = (yaml.loadAll(readFileSync(join(ROOT, 'manifests/kube-dns.yaml'), 'utf8')) as Obj[]).find((d) => d?.kind === 'Deployment')!;
const container = (name: string) => (deployment.spec.template.spec.containers as Obj[]).find((c) => c.name === name)!;
const IMAGES = [
  { pkg: 'kube-dns', container: 'kubedns' },
  { pkg: 'dnsmasq-nanny', container: 'dnsmasq' },
  { pkg: 'sidecar', container: 'sidecar' },
];
const pkgJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; workspaces: string[]; scripts: Record<string, string> };

test(`${DOCKERFILE}: one base an ARG, bundles from a build stage or the context, one shared runtime`, () => {
  const { args, stages } = parse(DOCKERFILE);
  assert.match(args.get('NODE_MAJOR') ?? '', /^\d+$/, 'ARG NODE_MAJOR=<n> (scripts/images.sh reads it)');
  assert.equal(args.get('BASE'), 'node:${NODE_MAJOR}-bookworm-slim', 'the registry base: the official Node.js image on the Debian release scripts/images.sh uses');
  assert.equal(args.get('BUNDLES'), 'build', 'the registry way builds the bundles itself');
  assert.equal(args.get('VERSION'), pkgJson.version, 'ARG VERSION = the package version');
  assert.equal(stages.get('build')?.from, 'node:${NODE_MAJOR}-bookworm-slim');
  assert.equal(stages.get('context')?.from, 'scratch');
  assert.equal(stages.get('bundles')?.from, '${BUNDLES}');
  assert.equal(stages.get('rootfs')?.from, '${BASE}');
  assert.equal(stages.get('runtime')?.from, 'scratch', 'the images hold nothing of the build base but what rootfs.sh copies');
  for (const { pkg } of IMAGES) assert.equal(stages.get(pkg)?.from, 'runtime', `${pkg} is built on the shared runtime`);

  // the registry way: npm ci needs every workspace's package.json; `npm run build` writes the bundles
  const build = stages.get('build')!;
  for (const ws of pkgJson.workspaces) assert.ok(build.lines.some((l) => l.startsWith(`COPY ${ws}/package.json `)), `build copies ${ws}/package.json`);
  assert.ok(build.lines.some((l) => /^RUN npm ci\b/.test(l)));
  assert.ok(build.lines.includes('RUN npm run build'));
  assert.match(pkgJson.scripts['build'] ?? '', /bundle/, 'npm run build writes the bundles');
  // the same paths either way
  for (const { pkg } of IMAGES) {
    assert.ok(stages.get('context')!.lines.includes(`COPY packages/${pkg}/bundle/ /app/packages/${pkg}/bundle/`), `context stage: ${pkg} bundle`);
  }
  // files copied from the build context exist, and local builds (dist, node_modules) are not sent
  for (const st of stages.values()) {
    for (const l of st.lines.filter((x) => /^COPY\s/i.test(x) && !x.includes('--from='))) {
      for (const src of l.split(/\s+/).slice(1, -1)) {
        if (src.includes('/bundle/')) continue; // written by npm run build
        assert.ok(existsSync(join(ROOT, src)), `${DOCKERFILE}: ${src} does not exist`);
        assert.ok(!/(^|\/)(dist|node_modules)(\/|$)/.test(src), `${DOCKERFILE}: ${src} is excluded from the build context`);
      }
    }
  }
  const ignore = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').filter((l) => !l.startsWith('#'));
  for (const p of ['**/node_modules', '**/dist', '**/*.tsbuildinfo', '.cache']) assert.ok(ignore.includes(p), p);
  assert.ok(!ignore.some((p) => /bundle/.test(p)), 'the bundles may be sent (BUNDLES=context)');
});

for (const { pkg, container: name } of IMAGES) {
  test(`image ${pkg}: runs its bundle with the image's node, as the manifest's user, and carries the labels`, () => {
    const { stages } = parse(DOCKERFILE);
    const lines = targetLines(stages, pkg);
    const stage = stages.get(pkg)!;
    // one layer of its own: the bundle (every other instruction is metadata)
    const layered = stage.lines.filter((l) => /^(COPY|ADD|RUN)\s/.test(l));
    assert.equal(layered.length, 1, `${pkg}: one layer of its own`);
    assert.match(layered[0]!, new RegExp(`^COPY --from=bundles /app/packages/${pkg}/bundle/${pkg}\\.cjs .* /app/$`));
    // and the side file with the modules the bundle loads on first use (scripts/bundle.mjs)
    assert.ok(layered[0]!.split(' ').includes(`/app/packages/${pkg}/bundle/${pkg}.lazy.cjs`), `${pkg}: the image ships ${pkg}.lazy.cjs`);
    const entry = JSON.parse(lines.find((l) => l.startsWith('ENTRYPOINT'))!.slice('ENTRYPOINT'.length)) as string[];
    const argv = pkg === 'dnsmasq-nanny' ? entry.slice(entry.indexOf('--') + 1) : entry;
    // the nanny's image runs tini (it reaps dnsmasq's orphaned children), as a subreaper when it
    // is not PID 1 (a pod with shareProcessNamespace: images-e2e.test.ts runs one)
    if (pkg === 'dnsmasq-nanny') assert.deepEqual(entry.slice(0, 3), ['/usr/bin/tini', '-s', '--']);
    assert.deepEqual(argv, ['/usr/local/bin/node', `/app/${pkg}.cjs`]);
    const user = lines.filter((l) => l.startsWith('USER ')).at(-1);
    const sc = container(name).securityContext;
    assert.equal(user, `USER ${sc.runAsUser}:${sc.runAsGroup}`, 'image user = manifest user');
    for (const label of ['source', 'version', 'licenses']) {
      assert.ok(lines.some((l) => l.startsWith('LABEL ') && l.includes(`org.opencontainers.image.${label}=`)), `label ${label}`);
    }
    assert.equal((container(name).image as string).split('/').at(-1), `${pkg}:${pkgJson.version}`, 'the manifest runs this release');
  });
}

test('the run-time filesystem: node, dnsmasq, tini and sleep from the build base, and the image dnsmasq.conf', () => {
  const { stages } = parse(DOCKERFILE);
  const rootfs = stages.get('rootfs')!.lines;
  assert.ok(rootfs.some((l) => /apt-get install .*\bdnsmasq-base\b.*\btini\b/.test(l)), 'the registry base gets dnsmasq-base and tini');
  assert.ok(rootfs.includes('COPY images/dnsmasq-nanny/dnsmasq.conf /rootfs/etc/dnsmasq.conf'));
  const script = readFileSync(join(ROOT, 'images/rootfs.sh'), 'utf8');
  // sleep: the manifest's preStop hooks exec it
  const bins = /^bins="([^"]+)"/m.exec(script)?.[1]?.split(' ') ?? [];
  for (const b of ['/usr/local/bin/node', '/usr/sbin/dnsmasq', '/usr/bin/tini', '/usr/bin/sleep']) assert.ok(bins.includes(b), `rootfs.sh copies ${b}`);
  for (const c of deployment.spec.template.spec.containers as Obj[]) {
    const cmd = c.lifecycle?.preStop?.exec?.command as string[] | undefined;
    if (cmd) assert.ok(bins.some((b) => b.endsWith(`/${cmd[0]}`)), `${c.name}: preStop ${cmd[0]} is in the image`);
  }
  const uid = container('kubedns').securityContext.runAsUser as number;
  assert.match(script, new RegExp(`^kube-dns:x:${uid}:${uid}:`, 'm'), 'the manifest user has a passwd entry');
});

test('the preload: built with the bundles, in the run-time filesystem, LD_PRELOAD of every image', () => {
  const { args, stages } = parse(DOCKERFILE);
  const so = 'images/preload/bundle/drop-symbol-tables.so';
  assert.match(pkgJson.scripts['build'] ?? '', /\bimages\/preload\/build\.sh\b/, 'npm run build compiles it');
  // the registry way compiles it in the build stage (which has no compiler of its own), the
  // podman way takes the host's from the context
  const build = stages.get('build')!.lines;
  assert.ok(build.some((l) => /apt-get install .*\bgcc\b.*\blibc6-dev\b/.test(l)), 'the build stage gets a C compiler');
  assert.ok(build.indexOf('COPY images/preload/ images/preload/') >= 0 && build.indexOf('COPY images/preload/ images/preload/') < build.indexOf('RUN npm run build'));
  assert.ok(stages.get('context')!.lines.includes('COPY images/preload/bundle/ /app/images/preload/bundle/'));
  const copy = stages.get('rootfs')!.lines.find((l) => l.startsWith(`COPY --from=bundles /app/${so} /rootfs/`));
  assert.ok(copy, 'rootfs copies the library from the bundles');
  const inImage = copy.split(' ').at(-1)!.slice('/rootfs'.length);
  for (const { pkg } of IMAGES) {
    const preload = imageEnv(stages, pkg, args).get('LD_PRELOAD')?.split(':') ?? [];
    assert.equal(preload[0], inImage, `${pkg}: LD_PRELOAD starts with ${inImage}`);
  }
  // the manifest leaves it to the images
  for (const c of deployment.spec.template.spec.containers as Obj[]) assert.ok(!(c.env ?? []).some((e: Obj) => e.name === 'LD_PRELOAD'), `${c.name}: no LD_PRELOAD of its own`);
});

test('the kube-dns image runs on jemalloc, from Debian, in the run-time filesystem; the other two on glibc', () => {
  const { args, stages } = parse(DOCKERFILE);
  // both ways of building get Debian's package: the registry base through apt, the podman base through mmdebstrap
  assert.ok(stages.get('rootfs')!.lines.some((l) => /apt-get install .*\blibjemalloc2\b/.test(l)), 'the registry base gets libjemalloc2');
  assert.match(readFileSync(join(ROOT, 'scripts/images.sh'), 'utf8'), /^DEB_INCLUDE=\S*\blibjemalloc2\b/m, 'the podman base gets libjemalloc2');
  const script = readFileSync(join(ROOT, 'images/rootfs.sh'), 'utf8');
  assert.ok((/^libs="([^"]+)"/m.exec(script)?.[1]?.split(' ') ?? []).includes('libjemalloc.so.2'), 'rootfs.sh copies libjemalloc.so.2');
  for (const { pkg } of IMAGES) {
    const env = imageEnv(stages, pkg, args);
    const preload = env.get('LD_PRELOAD')?.split(':') ?? [];
    if (pkg === 'kube-dns') {
      // by name: the loader finds it in the multiarch directory rootfs.sh copied it to
      assert.ok(preload.includes('libjemalloc.so.2'), `${pkg}: preloads libjemalloc.so.2`);
      // one arena and no thread cache over 1 KiB: the footprint of glibc's malloc (docs/footprint.md)
      assert.match(env.get('MALLOC_CONF') ?? '', /(^|,)narenas:1(,|$)/, `${pkg}: MALLOC_CONF with one arena`);
    } else {
      assert.ok(!preload.some((p) => p.includes('jemalloc')), `${pkg}: glibc's malloc`);
      assert.equal(env.get('MALLOC_CONF'), undefined, `${pkg}: no MALLOC_CONF`);
    }
  }
  // the build runs node with the same options, so that one jemalloc rejects fails it
  const check = stages.get('rootfs')!.lines.find((l) => l.startsWith('RUN ') && l.includes('libjemalloc.so.2'));
  assert.ok(check?.includes('MALLOC_CONF="$KUBE_DNS_MALLOC_CONF"'), 'the rootfs stage checks the options');
  assert.ok(stages.get('rootfs')!.lines.includes('ARG KUBE_DNS_MALLOC_CONF'), 'the rootfs stage takes the options');
  // the manifest leaves the allocator to the images
  for (const c of deployment.spec.template.spec.containers as Obj[]) assert.ok(!(c.env ?? []).some((e: Obj) => e.name === 'MALLOC_CONF'), `${c.name}: no MALLOC_CONF of its own`);
});

test("the build stage copies every project the root tsconfig builds: `npm run build` starts with tsc -b, which fails on a missing reference", () => {
  const { stages } = parse(DOCKERFILE);
  const build = stages.get('build');
  assert.ok(build, 'a build stage');
  const copied = build.lines.filter((l) => /^COPY\s/.test(l) && !/--from/.test(l)).map((l) => l.split(/\s+/).slice(1, -1)).flat();
  const covered = (file: string) => copied.some((src) => file === src || (src.endsWith('/') && file.startsWith(src)));
  const root = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8')) as { references: { path: string }[] };
  for (const { path } of root.references) {
    assert.ok(covered(`${path}/tsconfig.json`), `${path}/tsconfig.json is copied into the build stage before npm run build`);
    assert.ok(covered(`${path}/src/`) || covered(`${path}/`) || !existsSync(join(ROOT, path, 'src')), `${path}/src is copied too`);
  }
});
