// The addon manifests (manifests/) and the images (images/): what an operator relies on when
// applying them. kubectl is not available here, so the objects are checked field by field
// against @kubernetes/client-node's API models (what `kubectl apply --validate=strict` rejects),
// and every container's arguments are run through the real binaries' flag parsers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import yaml from 'js-yaml';
import { query } from '@kube-dns/dns-client';
import { clusterIPService, dnsmasqPath, freePort, startDnsmasq, startFakeApiServer } from '../src/index.js';

const ROOT = new URL('../../../../', import.meta.url).pathname;
const run = promisify(execFile);

type Obj = Record<string, any>;

function readDocs(file: string): Obj[] {
  return yaml.loadAll(readFileSync(join(ROOT, 'manifests', file), 'utf8')).filter((d): d is Obj => d !== null && d !== undefined);
}

const ADDON = readDocs('kube-dns.yaml');
const AUTOSCALER = readDocs('dns-horizontal-autoscaler.yaml');

function find(docs: Obj[], kind: string, name: string): Obj {
  const d = docs.find((x) => x.kind === kind && x.metadata?.name === name);
  assert.ok(d, `no ${kind} ${name}`);
  return d;
}

const deployment = () => find(ADDON, 'Deployment', 'kube-dns');
const podSpec = (d: Obj = deployment()) => d.spec.template.spec as Obj;
function container(name: string, d: Obj = deployment()): Obj {
  const c = (podSpec(d).containers as Obj[]).find((x) => x.name === name);
  assert.ok(c, `no container ${name}`);
  return c;
}
const args = (name: string, d?: Obj) => container(name, d).args as string[];
const flagValue = (list: string[], prefix: string) => list.find((a) => a.startsWith(prefix))?.slice(prefix.length);

// --- API schema -----------------------------------------------------------------------------

const API_VERSIONS: Record<string, string> = {
  Service: 'v1',
  ServiceAccount: 'v1',
  ConfigMap: 'v1',
  Deployment: 'apps/v1',
  ClusterRole: 'rbac.authorization.k8s.io/v1',
  ClusterRoleBinding: 'rbac.authorization.k8s.io/v1',
  Role: 'rbac.authorization.k8s.io/v1',
  RoleBinding: 'rbac.authorization.k8s.io/v1',
  PodDisruptionBudget: 'policy/v1',
};
const CLUSTER_SCOPED = new Set(['ClusterRole', 'ClusterRoleBinding']);
const QUANTITY = /^[0-9]+(\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/;

/** Unknown fields and wrongly typed values, checked against the client's generated API models. */
function schemaErrors(value: unknown, type: string, path: string, out: string[]): void {
  let m: RegExpMatchArray | null;
  if ((m = type.match(/^Array<(.+)>$/))) {
    if (!Array.isArray(value)) return void out.push(`${path}: want a list`);
    value.forEach((v, i) => schemaErrors(v, m![1]!, `${path}[${i}]`, out));
    return;
  }
  if ((m = type.match(/^\{ \[key: string\]: (.+); \}$/))) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return void out.push(`${path}: want a map`);
    for (const [k, v] of Object.entries(value)) schemaErrors(v, m[1]!, `${path}.${k}`, out);
    return;
  }
  switch (type) {
    case 'string':
      if (typeof value !== 'string') out.push(`${path}: want a string, got ${JSON.stringify(value)} (quote it in YAML)`);
      return;
    case 'number':
      if (!Number.isInteger(value)) out.push(`${path}: want an integer, got ${JSON.stringify(value)}`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') out.push(`${path}: want true or false, got ${JSON.stringify(value)}`);
      return;
    case 'IntOrString':
      if (!Number.isInteger(value) && typeof value !== 'string') out.push(`${path}: want an integer or a string`);
      return;
    case 'Date':
    case 'any':
    case 'object':
      return;
  }
  const model = (k8s as unknown as Record<string, { getAttributeTypeMap?: () => { baseName: string; type: string }[] }>)[type];
  assert.ok(model?.getAttributeTypeMap, `no API model ${type}`);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return void out.push(`${path}: want an object (${type})`);
  const fields = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  for (const [k, v] of Object.entries(value)) {
    const t = fields.get(k);
    if (t === undefined) out.push(`${path}.${k}: unknown field in ${type}`);
    else schemaErrors(v, t, `${path}.${k}`, out);
  }
}

for (const [file, docs] of [['kube-dns.yaml', ADDON], ['dns-horizontal-autoscaler.yaml', AUTOSCALER]] as const) {
  test(`${file}: every object is one the API server accepts as written`, () => {
    assert.ok(docs.length > 0);
    for (const d of docs) {
      const where = `${file}: ${d.kind} ${d.metadata?.name}`;
      assert.equal(typeof d.kind, 'string', `${file}: a document without kind`);
      assert.equal(d.apiVersion, API_VERSIONS[d.kind], `${where}: apiVersion`);
      assert.ok(typeof d.metadata?.name === 'string' && d.metadata.name.length > 0, `${where}: metadata.name`);
      if (CLUSTER_SCOPED.has(d.kind)) assert.equal(d.metadata.namespace, undefined, `${where}: cluster-scoped`);
      else assert.equal(d.metadata.namespace, 'kube-system', `${where}: namespace`);
      const errors: string[] = [];
      schemaErrors(d, `V1${d.kind}`, `${d.kind}/${d.metadata.name}`, errors);
      assert.deepEqual(errors, [], where);
    }
    for (const d of docs.filter((x) => x.kind === 'Deployment')) {
      const spec = podSpec(d);
      const volumes = new Set((spec.volumes ?? []).map((v: Obj) => v.name));
      for (const c of spec.containers as Obj[]) {
        for (const [kind, q] of Object.entries({ ...c.resources?.requests, ...c.resources?.limits })) {
          assert.match(String(q), QUANTITY, `${c.name}: ${kind} quantity`);
        }
        for (const vm of c.volumeMounts ?? []) assert.ok(volumes.has(vm.name), `${c.name}: mounts undeclared volume ${vm.name}`);
      }
      // The selector must select the template: the API server refuses the Deployment otherwise.
      for (const [k, v] of Object.entries(d.spec.selector.matchLabels as Record<string, string>)) {
        assert.equal(d.spec.template.metadata.labels[k], v, `${d.metadata.name}: selector ${k}`);
      }
    }
  });
}

test('the schema check catches the mistakes kubectl would reject', () => {
  const d = structuredClone(deployment());
  d.spec.template.spec.containers[0].securityContext.readOnlyRootFileSystem = true;
  d.metadata.labels['kubernetes.io/cluster-service'] = true;
  const errors: string[] = [];
  schemaErrors(d, 'V1Deployment', 'd', errors);
  assert.equal(errors.length, 2, errors.join('\n'));
  assert.match(errors.join('\n'), /readOnlyRootFileSystem: unknown field/);
  assert.match(errors.join('\n'), /cluster-service: want a string/);
});

// --- the pod ----------------------------------------------------------------------------------

test('the Deployment keeps the original pod: containers, ports, probes, mounts', () => {
  const d = deployment();
  const spec = podSpec(d);
  assert.deepEqual(d.spec.selector.matchLabels, { 'k8s-app': 'kube-dns' }, 'selector (immutable: in-place upgrade)');
  assert.equal(d.spec.replicas, undefined, 'replicas are left to the autoscaler');
  assert.deepEqual(d.spec.strategy.rollingUpdate, { maxSurge: '10%', maxUnavailable: 0 });
  assert.deepEqual(spec.containers.map((c: Obj) => c.name), ['kubedns', 'dnsmasq', 'sidecar']);
  const ports = (name: string) => container(name).ports.map((p: Obj) => `${p.name}:${p.containerPort}/${p.protocol}`);
  assert.deepEqual(ports('kubedns'), ['dns-local:10053/UDP', 'dns-tcp-local:10053/TCP', 'metrics:10055/TCP']);
  assert.deepEqual(ports('dnsmasq'), ['dns:53/UDP', 'dns-tcp:53/TCP']);
  assert.deepEqual(ports('sidecar'), ['metrics:10054/TCP']);

  const probe = (p: Obj | undefined) => p && `${p.httpGet.path}@${p.httpGet.port}`;
  assert.equal(probe(container('kubedns').readinessProbe), '/readiness@8081');
  assert.equal(probe(container('kubedns').livenessProbe), '/healthcheck/kubedns@10054');
  assert.equal(probe(container('dnsmasq').livenessProbe), '/healthcheck/dnsmasq@10054');
  assert.equal(probe(container('sidecar').livenessProbe), '/metrics@10054');
  for (const c of spec.containers as Obj[]) {
    assert.equal(c.livenessProbe.failureThreshold, 5, `${c.name}: several failures before a restart`);
  }
  // The liveness of kubedns and dnsmasq asks the sidecar's DNS probes, which fail until kube-dns's
  // first sync (SERVFAIL, never a wrong answer): it starts only once kube-dns is ready, within 10
  // minutes, or a slow API server at start restarted both after 100 s (the original's crash loop).
  for (const name of ['kubedns', 'dnsmasq']) {
    const s = container(name).startupProbe;
    assert.equal(probe(s), '/readiness@8081', `${name}: liveness held until kube-dns has synced`);
    assert.ok((s.periodSeconds ?? 10) * s.failureThreshold >= 600, `${name}: ${s.periodSeconds} s x ${s.failureThreshold} to sync`);
  }
  assert.equal(container('sidecar').startupProbe, undefined);
  // Every probe targets a port some container of the pod listens on.
  const listening = new Set((spec.containers as Obj[]).flatMap((c) => c.ports.map((p: Obj) => p.containerPort)));
  listening.add(8081); // kubedns --healthz-port (the original declares no port for it)
  for (const c of spec.containers as Obj[]) {
    for (const p of [c.livenessProbe, c.readinessProbe, c.startupProbe].filter(Boolean)) assert.ok(listening.has(p.httpGet.port), `${c.name}: probe port`);
  }

  const mount = (c: string, volume: string) => container(c).volumeMounts.find((m: Obj) => m.name === volume)?.mountPath;
  assert.equal(mount('kubedns', 'kube-dns-config'), '/kube-dns-config');
  assert.equal(mount('dnsmasq', 'kube-dns-config'), '/etc/k8s/dns/dnsmasq-nanny');
  assert.deepEqual(spec.volumes.find((v: Obj) => v.name === 'kube-dns-config').configMap, { name: 'kube-dns', optional: true });
  assert.equal(flagValue(args('kubedns'), '--config-dir='), '/kube-dns-config');
  assert.equal(flagValue(args('kubedns'), '--dns-port='), '10053');
  // PROMETHEUS_PORT as the original; the downward-API variables after it are for Events (events.test.ts)
  assert.deepEqual(container('kubedns').env[0], { name: 'PROMETHEUS_PORT', value: '10055' });

  assert.equal(spec.dnsPolicy, 'Default', 'kube-dns must not resolve through itself');
  assert.equal(spec.priorityClassName, 'system-cluster-critical');
  assert.deepEqual(spec.tolerations, [{ key: 'CriticalAddonsOnly', operator: 'Exists' }]);
  assert.equal(d.spec.template.metadata.annotations['prometheus.io/port'], '10054');
  // Each container: its preStop pause, then its lameduck period (the flag, else the binaries'
  // default of 5 s), then the queries in flight (forwards: up to 3 upstreams at 2 s each), with
  // room to spare for a slow node: if the kubelet's SIGKILL came first, the queries in flight of
  // a rolling update would be lost.
  for (const c of spec.containers as Obj[]) {
    const pause = Number(c.lifecycle?.preStop?.exec?.command?.[0] === 'sleep' ? c.lifecycle.preStop.exec.command[1] : 0);
    const lameArg = (c.args as string[]).find((a) => /^--?lameduck=/.test(a));
    const lameduck = lameArg ? Number(/=(\d+)s$/.exec(lameArg)?.[1]) : c.name === 'sidecar' ? 0 : 5;
    const needed = pause + lameduck + 3 * 2;
    assert.ok(spec.terminationGracePeriodSeconds >= needed * 1.5, `${c.name}: grace ${spec.terminationGracePeriodSeconds} s, needs ${needed} s and half again`);
  }
});

test('every container runs as non-root 1001 on a read-only root, and dnsmasq can still bind 53', () => {
  const spec = podSpec();
  for (const c of spec.containers as Obj[]) {
    const sc = c.securityContext;
    assert.equal(sc.runAsUser, 1001, c.name);
    assert.equal(sc.runAsGroup, 1001, c.name);
    assert.equal(sc.readOnlyRootFilesystem, true, c.name);
    assert.equal(sc.allowPrivilegeEscalation, false, c.name);
    assert.deepEqual(sc.capabilities.drop, ['ALL'], c.name);
  }
  // A capability would not reach a non-root process: the pod's privileged-port floor must.
  const floor = (spec.securityContext.sysctls as Obj[]).find((s) => s.name === 'net.ipv4.ip_unprivileged_port_start');
  assert.ok(floor && Number(floor.value) <= 53, 'net.ipv4.ip_unprivileged_port_start <= 53');
});

/** Mebibytes of a memory quantity (Mi or Gi): the units the manifest uses. */
function mebibytes(q: string): number {
  const m = /^(\d+)(Mi|Gi)$/.exec(q);
  assert.ok(m, `memory quantity ${q}: use Mi or Gi`);
  return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
}

test('every Node.js container caps its V8 heap below its memory limit, and node accepts the flags', async () => {
  for (const c of podSpec().containers as Obj[]) {
    const limit = mebibytes(c.resources.limits.memory);
    const request = mebibytes(c.resources.requests.memory);
    assert.ok(request <= limit, `${c.name}: request ${request}Mi above limit ${limit}Mi`);
    const opts = (c.env as Obj[] | undefined)?.find((e) => e.name === 'NODE_OPTIONS')?.value as string | undefined;
    assert.ok(opts, `${c.name}: NODE_OPTIONS sets the V8 heap against the limit`);
    const oldSpace = Number(/--max-old-space-size=(\d+)/.exec(opts)?.[1]);
    const semi = Number(/--max-semi-space-size=(\d+)/.exec(opts)?.[1]);
    assert.ok(oldSpace > 0 && semi > 0, `${c.name}: ${opts}`);
    // what is not old space: node itself (~40 MB), both semi-spaces, buffers
    assert.ok(oldSpace + 2 * semi + 40 <= limit, `${c.name}: ${opts} leaves too little of the ${limit}Mi limit for the rest of the process`);
    // node refuses a NODE_OPTIONS it does not allow, and the container would not start
    const r = await run(process.execPath, ['-e', 'process.stdout.write("ok")'], { env: { ...process.env, NODE_OPTIONS: opts } });
    assert.equal(r.stdout, 'ok', `${c.name}: node runs with NODE_OPTIONS=${opts}`);
  }
  // kube-dns's young generation no smaller than measured to cost no speed (docs/footprint.md: 2 MB
  // semi-spaces gave the qps and CPU per query of 8 MB)
  const kd = String((container('kubedns').env as Obj[]).find((e) => e.name === 'NODE_OPTIONS')?.value);
  assert.ok(Number(/--max-semi-space-size=(\d+)/.exec(kd)?.[1]) >= 2, 'kubedns: semi-spaces of at least 2 MB');
  assert.doesNotMatch(kd, /optimize-for-size|lite-mode|jitless/, 'kubedns: no flag that trades speed for memory');
});

test('the nanny accepts its arguments, and writes only to a writable volume', async () => {
  const { parseNannyOptions } = (await import(pathToFileURL(join(ROOT, 'packages/dnsmasq-nanny/dist/src/options.js')).href)) as {
    parseNannyOptions(argv: string[]): { kind: string; options: { configDir: string; stateDir: string; restartDnsmasq: boolean; clusterDomain: string; dnsmasqArgs: string[] } };
  };
  const a = args('dnsmasq');
  const parsed = parseNannyOptions(a);
  assert.equal(parsed.kind, 'options');
  const o = parsed.options;
  assert.equal(o.configDir, '/etc/k8s/dns/dnsmasq-nanny');
  assert.equal(o.restartDnsmasq, true);
  assert.deepEqual(o.dnsmasqArgs, a.slice(a.indexOf('--') + 1));
  const stateMount = container('dnsmasq').volumeMounts.find((m: Obj) => m.mountPath === o.stateDir);
  assert.ok(stateMount, `-stateDir ${o.stateDir} is not a mounted volume (the root filesystem is read-only)`);
  assert.ok(podSpec().volumes.find((v: Obj) => v.name === stateMount.name).emptyDir, 'the state dir is an emptyDir');
  assert.throws(() => parseNannyOptions(['-noSuchFlag=1', ...a]), /noSuchFlag/, 'the parser rejects unknown flags');
});

test('dnsmasq accepts the arguments it gets (the manifest\'s plus the nanny\'s) and the image\'s dnsmasq.conf', async (t) => {
  const { buildDnsmasqArgs } = (await import(pathToFileURL(join(ROOT, 'packages/dnsmasq-nanny/dist/src/dnsmasq-args.js')).href)) as {
    buildDnsmasqArgs(passthrough: string[], paths: { serversFile: string; hostsDir: string; largeHostsFile: string }): string[];
  };
  const passthrough = args('dnsmasq').slice(args('dnsmasq').indexOf('--') + 1);
  assert.ok(passthrough.some((x) => /^--dns-forward-max=\d+$/.test(x)), '--dns-forward-max is exposed');
  for (const original of ['-k', '--cache-size=1000', '--no-negcache', '--dns-loop-detect', '--log-facility=-']) {
    assert.ok(passthrough.includes(original), original);
  }
  const conf = join(ROOT, 'images/dnsmasq-nanny/dnsmasq.conf');
  const full = ['--test', `--conf-file=${conf}`, ...buildDnsmasqArgs(passthrough, { serversFile: '/run/dnsmasq-nanny/servers', hostsDir: '/run/dnsmasq-nanny/hosts.d', largeHostsFile: '/run/dnsmasq-nanny/configmap-hosts-large' })];
  const ok = await run(dnsmasqPath(), full);
  assert.match(ok.stderr + ok.stdout, /syntax check OK/);
  await assert.rejects(run(dnsmasqPath(), [...full, '--cache-size=lots']), 'dnsmasq --test rejects a bad option');

  // And they run: the cache size dnsmasq reports is the manifest's. (The test dnsmasq's base
  // arguments already keep it in the foreground and log to stderr: dnsmasq refuses repeats.)
  const dm = await startDnsmasq([`--conf-file=${conf}`, ...passthrough.filter((x) => x !== '-k' && x !== '--log-facility=-')]);
  t.after(() => dm.stop());
  const r = await query({ host: dm.host, port: dm.port }, { name: 'cachesize.bind', type: 'TXT', class: 'CH' });
  const txt = r.packet.answers?.[0] as { data?: Buffer[] } | undefined;
  assert.equal(String(txt?.data?.[0]), flagValue(passthrough, '--cache-size='));
});

async function versionOf(bin: string, argv: string[]): Promise<string> {
  const r = await run(process.execPath, [join(ROOT, `packages/${bin}/bin/${bin}.js`), ...argv, '--version'], { timeout: 15_000 });
  return r.stdout;
}

for (const [bin, name] of [['kube-dns', 'kubedns'], ['sidecar', 'sidecar']] as const) {
  test(`${bin} accepts every argument of container ${name}`, async () => {
    assert.match(await versionOf(bin, args(name)), /^Kube-DNS \S+\n$/);
    // --version must not short-circuit flag parsing, or the check above proves nothing.
    await assert.rejects(versionOf(bin, [...args(name), '--no-such-flag=1']), (e: { code?: number }) => e.code === 2);
  });
}

/** The sidecar's probes of the manifest: the live ones, or those of its commented alternative. */
function probeArgs(commented: boolean): string[] {
  if (!commented) return args('sidecar').filter((a) => a.startsWith('--probe='));
  const text = readFileSync(join(ROOT, 'manifests/kube-dns.yaml'), 'utf8');
  return [...text.matchAll(/^ *# - (--probe=\S+)$/gm)].map((m) => m[1]!);
}

// The liveness of kubedns and dnsmasq hangs on the sidecar's probes of kubernetes.default.svc.
// kubedns --namespaces (or --labels, --namespace-labels) can leave that name out: the probes
// then fail for good and the kubelet restarts both containers every two minutes. The manifest
// says so next to the probes and offers probes of a Service that the filter keeps.
test('with --namespaces leaving out default, the manifest\'s probes fail; the probes it offers instead answer', async (t) => {
  const { runProbe } = (await import(pathToFileURL(join(ROOT, 'packages/sidecar/dist/src/probe.js')).href)) as {
    runProbe(spec: { server: { host: string; port: number }; name: string; type: string }): Promise<{ ok: boolean; error?: string }>;
  };
  const { parseProbeSpec } = (await import(pathToFileURL(join(ROOT, 'packages/sidecar/dist/src/probe-spec.js')).href)) as {
    parseProbeSpec(v: string): { ok: true; value: { label: string; name: string; type: string } } | { ok: false; error: string };
  };
  const offered = probeArgs(true);
  assert.deepEqual(offered.map((p) => p.split(',')[0]), ['--probe=kubedns', '--probe=dnsmasq'], 'the manifest offers a probe for each container');

  const api = await startFakeApiServer();
  t.after(() => api.close());
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.96.0.1'], [{ name: 'https', port: 443 }]));
  api.upsert('services', clusterIPService('kube-system', 'kube-dns', ['10.96.0.10'], [{ name: 'dns', port: 53, protocol: 'UDP' }, { name: 'dns-tcp', port: 53, protocol: 'TCP' }]));
  const [dnsPort, healthzPort] = [await freePort(), await freePort()];
  const kd = spawn(process.execPath, [
    join(ROOT, 'packages/kube-dns/bin/kube-dns.js'),
    ...args('kubedns').filter((a) => a.startsWith('--domain=')),
    '--dns-bind-address=127.0.0.1', `--dns-port=${dnsPort}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthzPort}`,
    `--kubecfg-file=${api.kubeconfigPath}`, '--namespaces=kube-system',
  ], { stdio: 'ignore' });
  t.after(() => kd.kill('SIGKILL'));
  const deadline = Date.now() + 20_000;
  while ((await fetch(`http://127.0.0.1:${healthzPort}/readiness`).then((r) => r.status, () => 0)) !== 200) {
    assert.ok(Date.now() < deadline, 'kube-dns did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
  // Both probes go to kubedns here: what dnsmasq would forward it.
  const probe = async (arg: string) => {
    const r = parseProbeSpec(arg.slice('--probe='.length));
    assert.ok(r.ok, arg);
    return runProbe({ server: { host: '127.0.0.1', port: dnsPort }, name: r.value.name, type: r.value.type });
  };
  for (const p of probeArgs(false)) assert.equal((await probe(p)).ok, false, `${p} answers despite --namespaces=kube-system`);
  for (const p of offered) {
    const r = await probe(p);
    assert.ok(r.ok, `${p}: ${r.error}`);
  }
});

// --- the cluster domain, the Service, RBAC --------------------------------------------------------

/** The cluster domain as each of the five arguments that carry it sees it. */
function clusterDomains(d: Obj): Record<string, string | undefined> {
  const probes = args('sidecar', d).filter((a) => a.startsWith('--probe='));
  return {
    'kubedns --domain': flagValue(args('kubedns', d), '--domain=')?.replace(/\.$/, ''),
    'nanny -clusterDomain': flagValue(args('dnsmasq', d), '-clusterDomain='),
    // Every non-reverse domain dnsmasq sends to kubedns: exactly the cluster domain.
    'dnsmasq --server': args('dnsmasq', d)
      .map((a) => a.match(/^--server=\/([^/]+)\/127\.0\.0\.1#10053$/)?.[1])
      .filter((x) => x !== undefined && !x.endsWith('.arpa'))
      .join(','),
    ...Object.fromEntries(probes.map((p) => [`sidecar ${p.split(',')[0]}`, p.split(',')[2]?.replace(/^kubernetes\.default\.svc\./, '')])),
  };
}

test('the cluster domain is the same in all five places', () => {
  const domains = clusterDomains(deployment());
  assert.equal(Object.keys(domains).length, 5, JSON.stringify(domains));
  for (const [where, domain] of Object.entries(domains)) assert.equal(domain, 'cluster.local', where);
});

test('the Service selects the pod and reaches dnsmasq on 53/UDP and 53/TCP', () => {
  const svc = find(ADDON, 'Service', 'kube-dns');
  const labels = deployment().spec.template.metadata.labels;
  for (const [k, v] of Object.entries(svc.spec.selector as Record<string, string>)) assert.equal(labels[k], v, `selector ${k}`);
  assert.equal(svc.metadata.labels['kubernetes.io/name'], 'KubeDNS');
  assert.deepEqual(svc.spec.ports.map((p: Obj) => `${p.name}:${p.port}/${p.protocol}`), ['dns:53/UDP', 'dns-tcp:53/TCP']);
  for (const p of svc.spec.ports as Obj[]) {
    const target = p.targetPort ?? p.port;
    assert.ok(container('dnsmasq').ports.some((c: Obj) => c.containerPort === target && c.protocol === p.protocol), `${p.name} → dnsmasq`);
  }
  assert.match(svc.spec.clusterIP, /^\d+\.\d+\.\d+\.\d+$/);
  const pdb = find(ADDON, 'PodDisruptionBudget', 'kube-dns');
  assert.deepEqual(pdb.spec.selector.matchLabels, { 'k8s-app': 'kube-dns' });
});

function grants(role: Obj, group: string, resource: string, verb: string): boolean {
  return (role.rules as Obj[]).some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
}

function boundTo(docs: Obj[], role: Obj, namespace: string, sa: string): boolean {
  return docs.some(
    (b) =>
      b.kind === 'ClusterRoleBinding' &&
      b.roleRef.kind === 'ClusterRole' &&
      b.roleRef.name === role.metadata.name &&
      (b.subjects as Obj[]).some((s) => s.kind === 'ServiceAccount' && s.namespace === namespace && s.name === sa),
  );
}

test('kube-dns may list and watch Services and EndpointSlices with its own service account', () => {
  const sa = podSpec().serviceAccountName;
  find(ADDON, 'ServiceAccount', sa);
  const role = find(ADDON, 'ClusterRole', 'kube-dns-ts');
  for (const verb of ['list', 'watch']) {
    assert.ok(grants(role, '', 'services', verb), `services ${verb}`);
    assert.ok(grants(role, 'discovery.k8s.io', 'endpointslices', verb), `endpointslices ${verb}`);
  }
  assert.ok(!grants(role, '', 'pods', 'watch'), 'pods only with --pods=verified (commented)');
  for (const verb of ['list', 'watch']) assert.ok(grants(role, '', 'namespaces', verb), `namespaces ${verb} (--namespace-labels)`);
  assert.ok(!grants(role, '', 'namespaces', 'create') && !grants(role, '', 'namespaces', 'patch'), 'namespaces are only read');
  assert.ok(boundTo(ADDON, role, 'kube-system', sa));
});

test('the ConfigMap is EnsureExists and its commented example is a valid kube-dns config', async () => {
  const cm = find(ADDON, 'ConfigMap', 'kube-dns');
  assert.equal(cm.metadata.labels['addonmanager.kubernetes.io/mode'], 'EnsureExists');
  assert.equal(cm.data, undefined, 'shipped empty: users edit it');

  const text = readFileSync(join(ROOT, 'manifests/kube-dns.yaml'), 'utf8').split('\n');
  const start = text.indexOf('# data:');
  assert.ok(start >= 0, 'the example starts with "# data:"');
  const block: string[] = [];
  for (const line of text.slice(start)) {
    if (!line.startsWith('#')) break;
    block.push(line.replace(/^# ?/, ''));
  }
  const example = yaml.load(block.join('\n')) as { data: Record<string, string> };
  const { parseConfig } = (await import(pathToFileURL(join(ROOT, 'packages/config/dist/src/index.js')).href)) as {
    parseConfig(data: Record<string, string>): { ok: boolean; errors?: unknown; config?: { stubDomains: Map<string, unknown[]>; upstreamNameservers: unknown[]; hosts: unknown[] } };
  };
  const r = parseConfig(example.data);
  assert.ok(r.ok, JSON.stringify(r.errors));
  assert.equal(r.config!.stubDomains.size, 2);
  assert.equal(r.config!.upstreamNameservers.length, 2);
  assert.equal(r.config!.hosts.length, 2);
});

test('the autoscaler scales the kube-dns Deployment and may do so', () => {
  const d = find(AUTOSCALER, 'Deployment', 'kube-dns-autoscaler');
  const cmd = container('autoscaler', d).command as string[];
  assert.equal(flagValue(cmd, '--target='), `deployment/${deployment().metadata.name}`);
  assert.equal(flagValue(cmd, '--namespace='), deployment().metadata.namespace);
  const params = JSON.parse(flagValue(cmd, '--default-params=')!);
  assert.deepEqual(params.linear, { coresPerReplica: 256, nodesPerReplica: 16, preventSinglePointFailure: true });
  const role = find(AUTOSCALER, 'ClusterRole', 'system:kube-dns-autoscaler');
  assert.ok(grants(role, '', 'nodes', 'list'));
  for (const verb of ['get', 'update']) assert.ok(grants(role, 'apps', 'deployments/scale', verb), `apps deployments/scale ${verb}`);
  assert.ok(grants(role, '', 'configmaps', 'create'));
  assert.ok(boundTo(AUTOSCALER, role, 'kube-system', podSpec(d).serviceAccountName));
});

// --- kustomization ------------------------------------------------------------------------------

/** Applies RFC 6902 "replace" operations (all the example uses) to a copy of `doc`. */
function applyReplaces(doc: Obj, ops: { op: string; path: string; value: unknown }[]): Obj {
  const out = structuredClone(doc);
  for (const { op, path, value } of ops) {
    assert.equal(op, 'replace');
    const keys = path.split('/').slice(1);
    const last = keys.pop()!;
    let at: any = out;
    for (const k of keys) at = at?.[k];
    assert.ok(at !== undefined && at[last] !== undefined, `${path} does not exist`);
    at[last] = value;
  }
  return out;
}

test('the kustomization lists existing files and its example patch changes the whole domain', async () => {
  const text = readFileSync(join(ROOT, 'manifests/kustomization.yaml'), 'utf8');
  const k = yaml.load(text) as Obj;
  assert.equal(k.kind, 'Kustomization');
  for (const r of k.resources as string[]) assert.ok(existsSync(join(ROOT, 'manifests', r)), r);
  assert.ok((k.resources as string[]).includes('kube-dns.yaml'));

  const lines = text.split('\n');
  const start = lines.indexOf('# patches:');
  assert.ok(start >= 0);
  const block: string[] = [];
  for (const line of lines.slice(start)) {
    if (!line.startsWith('#')) break;
    block.push(line.replace(/^# ?/, ''));
  }
  const { patches } = yaml.load(block.join('\n')) as { patches: { target: { kind: string; name: string }; patch: string }[] };
  const patched = ADDON.map((doc) => {
    const p = patches.filter((x) => x.target.kind === doc.kind && x.target.name === doc.metadata.name);
    return p.reduce((d, x) => applyReplaces(d, yaml.load(x.patch) as never), doc);
  });
  const d = find(patched, 'Deployment', 'kube-dns');
  for (const [where, domain] of Object.entries(clusterDomains(d))) assert.equal(domain, 'example.org', where);
  assert.equal(find(patched, 'Service', 'kube-dns').spec.clusterIP, '10.0.0.10');
  assert.match(await versionOf('kube-dns', args('kubedns', d)), /^Kube-DNS /);
  assert.match(await versionOf('sidecar', args('sidecar', d)), /^Kube-DNS /);
});
