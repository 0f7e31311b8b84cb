// The images, built (scripts/images.sh) and run as the kube-dns pod of manifests/kube-dns.yaml in
// podman. `podman kube play` does not apply the pod's sysctl on this podman, so the Deployment's
// pod template is turned into the equivalent `podman pod create` / `podman run` commands here,
// keeping every securityContext, volume, sysctl, port, argument, env and resource of the manifest.
// Only what a cluster provides and this machine does not is replaced: the service account files
// (the fake API server's token and CA) and the API server address (KUBERNETES_SERVICE_HOST/PORT).
// The fake API server and the stand-in upstream and stub-domain DNS servers run inside the pod's
// network namespace (nsenter), so the pod reaches them on 127.0.0.1; the test talks to the pod
// only through ports published on 127.0.0.1. Needs root and podman (scripts/install.sh installs
// it); skipped with one message otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { datas, query } from '@kube-dns/dns-client';
import { clusterIPService, freePort } from '../src/index.js';

const ROOT = new URL('../../../../', import.meta.url).pathname;
const exec = promisify(execFile);
type Obj = Record<string, any>;

function skipReason(): string | false {
  if (process.getuid?.() !== 0) return 'images e2e: skipped: podman needs root here (run the suite as root, as CI does)';
  if (spawnSync('podman', ['--version']).status !== 0) return 'images e2e: skipped: podman is not installed (scripts/install.sh installs it as root)';
  return false;
}

const QUANTITY = /^([0-9.]+)(m|k|M|G|Ki|Mi|Gi)?$/;
function quantity(q: string | number): number {
  const m = QUANTITY.exec(String(q));
  assert.ok(m, `quantity ${q}`);
  const mult: Record<string, number> = { '': 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 };
  return Number(m[1]) * mult[m[2] ?? '']!;
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The ConfigMap volume as the kubelet writes it: files are links through `..data`, swapped atomically. */
function writeConfigMap(dir: string, data: Record<string, string>, gid: number): void {
  const version = `..${Date.now()}_${Math.random().toString(36).slice(2)}`;
  mkdirSync(join(dir, version), { mode: 0o755 });
  for (const [k, v] of Object.entries(data)) {
    writeFileSync(join(dir, version, k), v, { mode: 0o644 });
    chownSync(join(dir, version, k), 0, gid);
  }
  let old: string | undefined;
  try {
    old = readlinkSync(join(dir, '..data'));
  } catch {
    /* first write */
  }
  symlinkSync(version, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  for (const k of Object.keys(data)) {
    try {
      symlinkSync(join('..data', k), join(dir, k));
    } catch {
      /* exists */
    }
  }
  if (old) rmSync(join(dir, old), { recursive: true, force: true });
}

test('images: the kube-dns pod of manifests/kube-dns.yaml runs from the built images in podman', { skip: skipReason(), timeout: 14 * 60_000 }, async (t) => {
  const started = Date.now();
  const id = `kdns-e2e-${process.pid}`;
  const work = mkdtempSync(join(tmpdir(), `${id}-`));
  chmodSync(work, 0o755);
  // This machine's podman: runc (crun cannot run on its hybrid cgroup layout), cgroupfs, and
  // rlimits within what the host allows (podman's defaults are refused); the infra container too.
  const hardNofile = /Max open files\s+\d+\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1] ?? '1024';
  const conf = join(work, 'containers.conf');
  writeFileSync(conf, `[containers]\ndefault_ulimits = ["nofile=${hardNofile}:${hardNofile}", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\ncgroup_manager = "cgroupfs"\n`);
  const env = { ...process.env, CONTAINERS_CONF: conf };
  const podman = async (...args: string[]) => (await exec('podman', args, { env, maxBuffer: 64 << 20 })).stdout.trim();
  // What an earlier run killed before its clean-up left behind (its process is gone).
  const alive = (pid: number) => { try { process.kill(pid, 0); return true; } catch { return false; } };
  for (const name of (await podman('pod', 'ps', '--format', '{{.Name}}')).split('\n')) {
    const m = /^kdns-e2e-(\d+)(-pidns)?$/.exec(name);
    if (m && !alive(Number(m[1]))) await podman('pod', 'rm', '-f', '-t', '0', name).catch(() => undefined);
  }
  for (const ref of (await podman('images', '--format', '{{.Repository}}:{{.Tag}}')).split('\n')) {
    const m = /^localhost\/kdns-e2e-(\d+)\//.exec(ref);
    if (m && !alive(Number(m[1]))) await podman('rmi', '-f', ref).catch(() => undefined);
  }
  const cleanups: (() => Promise<unknown> | unknown)[] = [];
  const imagesBefore = new Set((await podman('images', '-a', '-q', '--no-trunc')).split('\n').filter(Boolean));
  const pkgVersion = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

  try {
    // --- build ------------------------------------------------------------------------------
    const registry = `localhost/${id}`;
    const tag = 'e2e';
    const t0 = Date.now();
    const build = await exec('bash', [join(ROOT, 'scripts/images.sh'), '--tag', tag], { cwd: ROOT, env: { ...env, REGISTRY: registry }, maxBuffer: 64 << 20 });
    t.diagnostic(`scripts/images.sh: ${((Date.now() - t0) / 1000).toFixed(0)} s\n${build.stdout.trim()}`);
    const imageOf = (manifestImage: string) => `${registry}/${manifestImage.split('/').at(-1)!.split(':')[0]}:${tag}`;

    const docs = yaml.loadAll(readFileSync(join(ROOT, 'manifests/kube-dns.yaml'), 'utf8')) as Obj[];
    const deployment = docs.find((d) => d?.kind === 'Deployment' && d.metadata?.name === 'kube-dns')!;
    const spec = deployment.spec.template.spec as Obj;
    const containers = spec.containers as Obj[];
    const images = containers.map((c) => imageOf(c.image));

    await t.test('the three images share every layer but the last, small and within the size goals', async () => {
      const layers = await Promise.all(images.map(async (i) => JSON.parse(await podman('image', 'inspect', '--format', '{{json .RootFS.Layers}}', i)) as string[]));
      const history = await Promise.all(images.map(async (i) => (JSON.parse(await podman('history', '--format', 'json', i)) as { size: number }[]).filter((h) => h.size > 0)));
      for (const l of layers) assert.deepEqual(l.slice(0, -1), layers[0]!.slice(0, -1), 'shared base layers');
      assert.equal(new Set(layers.map((l) => l.at(-1))).size, layers.length, 'one own layer each');
      const own = history.map((h) => h[0]!.size);
      const base = history[0]!.slice(1).reduce((s, h) => s + h.size, 0);
      for (const [i, s] of own.entries()) assert.ok(s <= 5e6, `${images[i]}: own layer ${s} bytes > 5 MB`);
      assert.ok(base + own.reduce((a, b) => a + b, 0) <= 200e6, `the set: ${base} + ${own.join(' + ')} bytes > 200 MB`);
    });

    await t.test('reproducible: built again from scratch, the same images (nodes pull nothing new)', async () => {
      const again = `${tag}-again`;
      await exec('bash', [join(ROOT, 'scripts/images.sh'), '--tag', again, '--no-cache'], { cwd: ROOT, env: { ...env, REGISTRY: registry }, maxBuffer: 64 << 20 });
      // the layers: what a node pulls (the image's config, a kilobyte, also names the local
      // intermediate images a build started from)
      for (const image of images) {
        const [first, second] = await Promise.all([image, image.replace(/:[^:]+$/, `:${again}`)].map((i) => podman('image', 'inspect', '--format', '{{json .RootFS.Layers}}', i)));
        assert.equal(second, first, `${image}: the same inputs give the same layer digests`);
      }
    });

    await t.test('the images: OCI labels, non-root, --version, no package manager, shell or compiler', async () => {
      for (const image of images) {
        const cfg = JSON.parse(await podman('image', 'inspect', '--format', '{{json .Config}}', image)) as { User: string; Labels: Record<string, string> };
        assert.match(cfg.User, /^[1-9][0-9]*:[1-9][0-9]*$/, `${image}: numeric non-root user`);
        assert.equal(cfg.Labels['org.opencontainers.image.version'], pkgVersion);
        assert.match(cfg.Labels['org.opencontainers.image.source'] ?? '', /^https:\/\//);
        assert.ok(cfg.Labels['org.opencontainers.image.licenses'], `${image}: licenses label`);
        const version = await podman('run', '--rm', '--network', 'none', image, '--version');
        assert.equal(version, `Kube-DNS ${pkgVersion}`, `${image} --version`);
        const present = await podman('run', '--rm', '--network', 'none', '--entrypoint', '/usr/local/bin/node', image, '-e',
          `const fs=require('fs');console.log(${JSON.stringify(['/bin/sh', '/usr/bin/bash', '/usr/bin/apt', '/usr/bin/apt-get', '/usr/bin/dpkg', '/usr/bin/perl', '/usr/bin/gcc', '/usr/bin/cc', '/usr/local/bin/npm', '/usr/local/bin/npx', '/usr/local/bin/corepack'])}.filter(p=>fs.existsSync(p)).join(' '))`);
        assert.equal(present, '', `${image} holds ${present}`);
        // the nanny's default -stateDir, for a pod spec without the manifest's emptyDir there (the
        // original's, images swapped): writable by the image's user, or the nanny stops at start
        const writable = await podman('run', '--rm', '--network', 'none', '--entrypoint', '/usr/local/bin/node', image, '-e',
          `const fs=require('fs');try{fs.accessSync('/run/dnsmasq-nanny',fs.constants.W_OK);console.log('writable')}catch(e){console.log(e.code)}`);
        assert.equal(writable, 'writable', `${image}: /run/dnsmasq-nanny`);
      }
    });

    await t.test('shareProcessNamespace: the nanny\'s tini, not PID 1 there, starts without a warning', async () => {
      const nanny = imageOf(containers.find((c) => (c.ports ?? []).some((p: Obj) => p.containerPort === 53))!.image);
      const shared = `${id}-pidns`;
      await podman('pod', 'create', '--name', shared, '--share', 'pid,net', '--network', 'none');
      try {
        // the pod's pause process holds PID 1 of the namespace the containers share
        const pid = await podman('run', '--rm', '--pod', shared, '--entrypoint', '/usr/local/bin/node', nanny, '-e', 'console.log(process.pid)');
        assert.notEqual(pid, '1', 'the containers share the pod\'s PID namespace');
        const run = await exec('podman', ['run', '--rm', '--pod', shared, nanny, '--version'], { env });
        assert.equal(run.stdout.trim(), `Kube-DNS ${pkgVersion}`);
        // without -s tini says reaping won't work: operators read that at every start
        assert.equal(run.stderr.trim(), '', 'nothing on stderr');
      } finally {
        await podman('pod', 'rm', '-f', '-t', '0', shared).catch(() => undefined);
      }
    });

    // --- the pod ------------------------------------------------------------------------------
    const podSc = (spec.securityContext ?? {}) as Obj;
    assert.equal(podSc.seccompProfile?.type ?? 'RuntimeDefault', 'RuntimeDefault', 'podman applies its default seccomp profile: RuntimeDefault');
    const published = new Map<string, number>(); // "53/udp" -> host port
    for (const c of containers) {
      for (const p of c.ports ?? []) published.set(`${p.containerPort}/${(p.protocol ?? 'TCP').toLowerCase()}`, 0);
      for (const probe of [c.livenessProbe, c.readinessProbe]) if (probe?.httpGet) published.set(`${probe.httpGet.port}/tcp`, 0);
    }
    for (const k of published.keys()) published.set(k, await freePort());
    const hostPort = (p: string) => published.get(p)!;
    const pod = id;
    // dnsPolicy Default hands the pod the node's resolv.conf; here that would point outside the
    // machine, so the pod's resolver is its own loopback (nothing in the pod uses it: the
    // ConfigMap names every upstream).
    const podArgs = ['pod', 'create', '--name', pod, '--dns', '127.0.0.1'];
    for (const s of podSc.sysctls ?? []) podArgs.push('--sysctl', `${s.name}=${s.value}`);
    for (const [p, h] of published) podArgs.push('-p', `127.0.0.1:${h}:${p}`);
    await podman(...podArgs);
    cleanups.push(() => podman('pod', 'rm', '-f', '-t', '0', pod));
    await podman('pod', 'start', pod);
    const infra = await podman('pod', 'inspect', '--format', '{{.InfraContainerID}}', pod);
    const infraPid = await podman('inspect', '--format', '{{.State.Pid}}', infra);

    // The cluster, inside the pod's network namespace.
    const world: ChildProcess = spawn('nsenter', [`--net=/proc/${infraPid}/ns/net`, process.execPath, join(ROOT, 'packages/testkit/dist/test/images-e2e-world.js')], { stdio: ['pipe', 'pipe', 'inherit'] });
    cleanups.push(() => new Promise((r) => { world.once('exit', r); world.stdin!.end(); setTimeout(() => world.kill('SIGKILL'), 5000).unref(); }));
    const replies = createInterface({ input: world.stdout! })[Symbol.asyncIterator]();
    const next = async () => JSON.parse((await replies.next()).value as string) as Obj;
    const cluster = (await next()) as { api: { port: number; token: string; caPem: string }; upstream: number; stub: number; stub2: number };
    const upsert = async (resource: string, obj: object) => {
      world.stdin!.write(`${JSON.stringify({ op: 'upsert', resource, obj })}\n`);
      assert.deepEqual(await next(), { ok: true });
    };

    // Volumes as the kubelet makes them: owned by fsGroup, read-only ConfigMap and token.
    const fsGroup = Number(podSc.fsGroup ?? 0);
    const groups = [...new Set([...(podSc.supplementalGroups ?? []), ...(podSc.fsGroup !== undefined ? [podSc.fsGroup] : [])].map(String))];
    const configDir = join(work, 'configmap');
    mkdirSync(configDir, { mode: 0o755 });
    chownSync(configDir, 0, fsGroup);
    writeConfigMap(configDir, {
      upstreamNameservers: JSON.stringify([`127.0.0.1:${cluster.upstream}`]),
      stubDomains: JSON.stringify({ 'corp.internal': [`127.0.0.1:${cluster.stub}`] }),
    }, fsGroup);
    const saDir = join(work, 'serviceaccount');
    mkdirSync(saDir, { mode: 0o755 });
    for (const [f, text] of Object.entries({ token: cluster.api.token, 'ca.crt': cluster.api.caPem, namespace: 'kube-system' })) {
      writeFileSync(join(saDir, f), text, { mode: 0o640 });
      chownSync(join(saDir, f), 0, fsGroup);
    }

    // The downward API: what the kubelet would put in these variables.
    const downward: Record<string, string> = {
      'metadata.name': `${deployment.metadata.name}-e2e-${process.pid}`,
      'metadata.namespace': deployment.metadata.namespace,
      'metadata.uid': randomUUID(),
      'spec.nodeName': 'e2e-node',
    };
    const runArgs = (c: Obj, opts: { pod?: string; name: string; skipVolumes?: string[]; readOnlyVolumes?: string[] }): string[] => {
      const sc = { ...podSc, ...(c.securityContext ?? {}) } as Obj;
      const a = ['run', '-d', '--name', opts.name];
      a.push(...(opts.pod ? ['--pod', opts.pod] : ['--network', 'none']));
      if (sc.runAsUser !== undefined) a.push('--user', `${sc.runAsUser}:${sc.runAsGroup ?? sc.runAsUser}`);
      for (const g of groups) a.push('--group-add', g);
      if (sc.readOnlyRootFilesystem) a.push('--read-only', '--read-only-tmpfs=false');
      if (sc.allowPrivilegeEscalation === false) a.push('--security-opt', 'no-new-privileges');
      for (const cap of sc.capabilities?.drop ?? []) a.push('--cap-drop', cap);
      for (const cap of sc.capabilities?.add ?? []) a.push('--cap-add', cap);
      if (sc.runAsNonRoot) assert.ok(Number(sc.runAsUser) > 0, `${c.name}: runAsNonRoot with runAsUser ${sc.runAsUser}`);
      const res = (c.resources ?? {}) as Obj;
      if (res.limits?.memory) a.push('--memory', String(quantity(res.limits.memory)));
      if (res.limits?.cpu) a.push('--cpus', String(quantity(res.limits.cpu)));
      // the kubelet's cpu.shares from the request
      if (res.requests?.cpu) a.push('--cpu-shares', String(Math.max(2, Math.round(quantity(res.requests.cpu) * 1024))));
      for (const e of c.env ?? []) {
        const field = e.valueFrom?.fieldRef?.fieldPath as string | undefined;
        const value = e.value ?? (field ? downward[field] : undefined);
        assert.ok(value !== undefined, `${c.name}: env ${e.name}: only plain values and the downward API fields ${Object.keys(downward).join(', ')}`);
        a.push('--env', `${e.name}=${value}`);
      }
      a.push('--env', 'KUBERNETES_SERVICE_HOST=127.0.0.1', '--env', `KUBERNETES_SERVICE_PORT=${cluster.api.port}`);
      if (spec.automountServiceAccountToken !== false) a.push('--volume', `${saDir}:/var/run/secrets/kubernetes.io/serviceaccount:ro`);
      for (const vm of c.volumeMounts ?? []) {
        if (opts.skipVolumes?.includes(vm.name)) continue;
        const v = (spec.volumes as Obj[]).find((x) => x.name === vm.name);
        assert.ok(v, `${c.name}: volume ${vm.name} is declared`);
        const ro = vm.readOnly || opts.readOnlyVolumes?.includes(vm.name);
        if (v.configMap) {
          a.push('--volume', `${configDir}:${vm.mountPath}:ro`);
        } else if (v.emptyDir && !opts.readOnlyVolumes?.includes(vm.name)) {
          assert.equal(containers.filter((x) => (x.volumeMounts ?? []).some((m: Obj) => m.name === vm.name)).length, 1, `emptyDir ${vm.name} in one container`);
          const size = v.emptyDir.sizeLimit ? `,tmpfs-size=${quantity(v.emptyDir.sizeLimit)}` : '';
          assert.equal(v.emptyDir.medium, 'Memory', `emptyDir ${vm.name}: medium Memory (a tmpfs)`);
          a.push('--mount', `type=tmpfs,destination=${vm.mountPath}${size},tmpfs-mode=0777${ro ? ',ro' : ''}`);
        } else if (v.emptyDir) {
          const dir = join(work, `ro-${vm.name}`);
          mkdirSync(dir, { recursive: true, mode: 0o777 });
          a.push('--volume', `${dir}:${vm.mountPath}:ro`);
        } else {
          assert.fail(`${c.name}: volume ${vm.name}: only configMap and emptyDir are supported here`);
        }
      }
      if (c.command) a.push('--entrypoint', JSON.stringify(c.command));
      a.push(imageOf(c.image), ...(c.args ?? []));
      return a;
    };

    const ctr = (name: string) => `${pod}-${name}`;
    for (const c of containers) await podman(...runArgs(c, { pod, name: ctr(c.name) }));
    const dnsmasqName = containers.find((c) => (c.ports ?? []).some((p: Obj) => p.containerPort === 53))!.name as string;

    const dns = { host: '127.0.0.1', port: hostPort('53/udp') };
    const dig = async (name: string, type: 'A' | 'SRV' | 'TXT' = 'A', transport: 'udp' | 'tcp' = 'udp') =>
      datas((await query(transport === 'tcp' ? { host: '127.0.0.1', port: hostPort('53/tcp') } : dns, { name, type, transport, timeoutMs: 1000 })).packet.answers).sort().join(' ');
    const http = async (port: number, path: string) => {
      const r = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(3000) });
      return { status: r.status, body: await r.text() };
    };
    const logs = async () => {
      const out: string[] = [];
      for (const c of containers) out.push(`--- ${c.name}\n${(await exec('podman', ['logs', '--tail', '30', ctr(c.name)], { env }).catch((e: Error) => ({ stdout: '', stderr: e.message }))).stderr}`);
      return out.join('\n');
    };

    await t.test('through port 53: a service, a headless service, an external name, a stub domain', async () => {
      await until('the pod answers a cluster name through dnsmasq and kube-dns', async () => (await dig('kubernetes.default.svc.cluster.local')) === '10.96.0.1', 120_000)
        .catch(async (e: Error) => assert.fail(`${e.message}\n${await logs()}`));
      assert.equal(await dig('frontend.shop.svc.cluster.local'), '10.96.12.7');
      assert.equal(await dig('frontend.shop.svc.cluster.local', 'A', 'tcp'), '10.96.12.7', 'over TCP');
      assert.equal(await dig('db.shop.svc.cluster.local'), '10.244.1.5 10.244.2.9');
      assert.equal(await dig('_postgres._tcp.db.shop.svc.cluster.local', 'SRV'), '10 50 5432 db-0.db.shop.svc.cluster.local. 10 50 5432 db-1.db.shop.svc.cluster.local.');
      assert.equal(await dig('payments.shop.svc.cluster.local'), '192.0.2.80 api.payments.example.com.', 'CNAME, then the upstream');
      assert.equal(await dig('wiki.corp.internal'), '10.10.0.53', 'stub domain');
      assert.equal(await dig('www.example.org'), '192.0.2.80', 'upstream');
      await upsert('services', clusterIPService('shop', 'cart', ['10.96.30.3']));
      await until('a Service created now is answered', async () => (await dig('cart.shop.svc.cluster.local')) === '10.96.30.3', 30_000);
    });

    await t.test('a ConfigMap edit is applied live', async () => {
      writeConfigMap(configDir, {
        upstreamNameservers: JSON.stringify([`127.0.0.1:${cluster.upstream}`]),
        stubDomains: JSON.stringify({ 'corp.internal': [`127.0.0.1:${cluster.stub2}`] }),
        hosts: '192.0.2.10 printer.office.lan\n',
      }, fsGroup);
      await until('the new stub server answers corp.internal', async () => (await dig('intranet.corp.internal')) === '10.10.0.54', 60_000);
      await until('the hosts key is served', async () => (await dig('printer.office.lan')) === '192.0.2.10', 30_000);
    });

    await t.test('metrics on 10054 and 10055, readiness on 8081, healthy probes', async () => {
      const sidecar = await until('the sidecar has probed both', async () => {
        const m = await http(hostPort('10054/tcp'), '/metrics');
        return /^kubedns_probe_dnsmasq_latency_ms_count [1-9]/m.test(m.body) && /^kubedns_probe_kubedns_latency_ms_count [1-9]/m.test(m.body) ? m : undefined;
      }, 60_000);
      assert.match(sidecar.body, /^kubedns_dnsmasq_hits \d+/m);
      assert.match(sidecar.body, /^kubedns_dnsmasq_max_size 1000$/m, 'dnsmasq --cache-size from the manifest');
      for (const probe of ['kubedns', 'dnsmasq']) {
        await until(`/healthcheck/${probe} 200`, async () => (await http(hostPort('10054/tcp'), `/healthcheck/${probe}`)).status === 200, 30_000);
      }
      const kd = await http(hostPort('10055/tcp'), '/metrics');
      assert.equal(kd.status, 200);
      assert.match(kd.body, /^skydns_skydns_dns_request_count_total\{[^}]*\} [1-9]/m);
      assert.match(kd.body, /^kubedns_synced 1$/m);
      assert.match(kd.body, /^kubedns_config_reloads_total [1-9]/m, 'the ConfigMap edit counted');
      assert.equal((await http(hostPort('8081/tcp'), '/readiness')).status, 200);
    });

    await t.test('dnsmasq killed inside its container: the nanny restarts it and the pod answers again', async () => {
      const findAndKill = `const fs=require('fs');const p=fs.readdirSync('/proc').filter(d=>/^\\d+$/.test(d)).find(d=>{try{return fs.readFileSync('/proc/'+d+'/comm','utf8').trim()==='dnsmasq'}catch{return false}});if(!p)process.exit(3);process.kill(Number(p),'SIGKILL');console.log(p)`;
      const before = await podman('exec', ctr(dnsmasqName), '/usr/local/bin/node', '-e', findAndKill);
      const findOnly = findAndKill.replace(`process.kill(Number(p),'SIGKILL');`, '');
      const after = await until('a new dnsmasq', async () => {
        const pid = await podman('exec', ctr(dnsmasqName), '/usr/local/bin/node', '-e', findOnly).catch(() => '');
        return pid && pid !== before ? pid : undefined;
      }, 30_000);
      assert.notEqual(after, before);
      await until('answers through port 53 again', async () => (await dig('frontend.shop.svc.cluster.local')) === '10.96.12.7', 30_000);
      assert.equal(await podman('inspect', '--format', '{{.State.Running}} {{.RestartCount}}', ctr(dnsmasqName)), 'true 0', 'the container itself kept running');
    });

    await t.test('the preStop hook of the manifest runs in its image', async () => {
      await Promise.all(containers.filter((c) => c.lifecycle?.preStop?.exec).map((c) => podman('exec', ctr(c.name), ...(c.lifecycle.preStop.exec.command as string[]))));
    });

    await t.test('peak memory of each container within its limit (cgroup v1)', async () => {
      const lines: string[] = [];
      for (const c of containers) {
        const pid = await podman('inspect', '--format', '{{.State.Pid}}', ctr(c.name));
        const cg = /^\d+:memory:(.*)$/m.exec(readFileSync(`/proc/${pid}/cgroup`, 'utf8'))?.[1];
        assert.ok(cg, `${c.name}: a memory cgroup`);
        const read = (f: string) => Number(readFileSync(`/sys/fs/cgroup/memory${cg}/${f}`, 'utf8'));
        const peak = read('memory.max_usage_in_bytes');
        const rss = /^total_rss (\d+)$/m.exec(readFileSync(`/sys/fs/cgroup/memory${cg}/memory.stat`, 'utf8'))?.[1];
        const limitQ = c.resources?.limits?.memory as string | undefined;
        const limit = limitQ ? quantity(limitQ) : undefined;
        if (limit) {
          assert.equal(read('memory.limit_in_bytes'), limit, `${c.name}: the manifest's limit is enforced`);
          assert.ok(peak < limit, `${c.name}: peak ${peak} >= limit ${limit}`);
        }
        assert.equal(await podman('inspect', '--format', '{{.State.OOMKilled}}', ctr(c.name)), 'false', `${c.name}: OOM-killed`);
        lines.push(`${c.name}: peak ${(peak / 2 ** 20).toFixed(0)} MiB (rss now ${(Number(rss) / 2 ** 20).toFixed(0)} MiB), limit ${limitQ ?? 'none'}, request ${c.resources?.requests?.memory ?? 'none'}`);
      }
      t.diagnostic(lines.join('\n'));
    });

    await t.test('every node process runs with the images\' preload: its symbol tables are not resident (docs/footprint.md); kube-dns\'s allocator is jemalloc', async () => {
      const lines: string[] = [];
      for (const c of containers) {
        const top = Number(await podman('inspect', '--format', '{{.State.Pid}}', ctr(c.name)));
        // the container's first process and its children (the nanny's image: tini, then node)
        const children = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
        const node = [top, ...children(top)].find((pid) => readlinkSync(`/proc/${pid}/exe`).endsWith('/usr/local/bin/node'));
        assert.ok(node, `${c.name}: a node process`);
        const maps = readFileSync(`/proc/${node}/maps`, 'utf8');
        assert.match(maps, /\/usr\/local\/lib\/kube-dns\/drop-symbol-tables\.so$/m, `${c.name}: the library is loaded`);
        // the image's LD_PRELOAD names it without a path: the image's loader must find it, or
        // it skips it with a warning and kube-dns runs on glibc's malloc (docs/hot-path.md, "The allocator")
        if (c.name === 'kubedns') {
          assert.match(maps, /\/libjemalloc\.so\.2$/m, `${c.name}: jemalloc is loaded`);
          // and took the image's MALLOC_CONF: an option it rejects is a "<jemalloc>: ..." line
          const log = await exec('podman', ['logs', ctr(c.name)], { env });
          assert.doesNotMatch(log.stdout + log.stderr, /<jemalloc>/, `${c.name}: jemalloc's options accepted`);
        } else assert.doesNotMatch(maps, /jemalloc/, `${c.name}: glibc's malloc`);
        // the binary's first mapping: its read-only segment with the dynamic symbol tables
        const smaps = readFileSync(`/proc/${node}/smaps`, 'utf8');
        const first = /^([0-9a-f]+)-([0-9a-f]+) r--p 00000000 \S+ \d+\s+\S*\/usr\/local\/bin\/node\n(?:.*\n)*?Rss:\s+(\d+) kB/m.exec(smaps);
        assert.ok(first, `${c.name}: node's first mapping`);
        const sizeKb = (parseInt(first[2]!, 16) - parseInt(first[1]!, 16)) / 1024;
        const rssKb = Number(first[3]);
        assert.ok(sizeKb > 3000, `${c.name}: node's tables are megabytes (${sizeKb} KB)`);
        assert.ok(rssKb < sizeKb / 3, `${c.name}: ${rssKb} of ${sizeKb} KB of node's symbol tables resident`);
        lines.push(`${c.name}: ${rssKb} of ${sizeKb} KB of node's symbol tables resident`);
      }
      t.diagnostic(lines.join('\n'));
    });

    await t.test('SIGTERM: every container stops cleanly within the grace period', async () => {
      const grace = String(spec.terminationGracePeriodSeconds ?? 30);
      await Promise.all(containers.map((c) => podman('stop', '-t', grace, ctr(c.name))));
      for (const c of containers) assert.equal(await podman('inspect', '--format', '{{.State.ExitCode}}', ctr(c.name)), '0', `${c.name}: exit code`);
    });

    await t.test('a manifest edit the image cannot honour: one clear line naming the path, no stack trace', async () => {
      const nanny = containers.find((c) => c.name === dnsmasqName)!;
      const state = (nanny.volumeMounts as Obj[]).find((m) => (spec.volumes as Obj[]).find((v) => v.name === m.name)?.emptyDir)!;
      const cases = [
        { name: `${pod}-novolume`, opts: { skipVolumes: [state.name] }, what: 'the emptyDir removed' },
        { name: `${pod}-readonly`, opts: { readOnlyVolumes: [state.name] }, what: 'the emptyDir read-only' },
      ];
      for (const k of cases) {
        await podman(...runArgs(nanny, { name: k.name, ...k.opts }));
        cleanups.push(() => podman('rm', '-f', k.name));
      }
      for (const k of cases) {
        const code = await podman('wait', k.name);
        const log = (await exec('podman', ['logs', k.name], { env })).stderr;
        assert.notEqual(code, '0', `${k.what}: exits non-zero`);
        const naming = log.split('\n').filter((l) => l.includes(state.mountPath));
        assert.equal(naming.length, 1, `${k.what}: one line names ${state.mountPath}:\n${log}`);
        assert.match(naming[0]!, /writable volume/);
        assert.doesNotMatch(log, /^\s+at /m, `${k.what}: no stack trace:\n${log}`);
      }
    });
  } finally {
    for (const c of cleanups.reverse()) await Promise.resolve().then(c).catch(() => undefined);
    // what this run built (images.sh's base too, when it was new), not what was there before
    const built = (await podman('images', '-a', '-q', '--no-trunc').catch(() => '')).split('\n').filter((i) => i && !imagesBefore.has(i));
    for (let i = 0; i < 3 && built.length; i++) await podman('rmi', '-f', ...built).catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
    t.diagnostic(`images e2e: ${((Date.now() - started) / 1000).toFixed(0)} s in all`);
  }
});
