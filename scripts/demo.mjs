#!/usr/bin/env node
// Runs the whole kube-dns pod on this machine: kube-dns, dnsmasq-nanny (with a real dnsmasq) and
// the sidecar, against an embedded demo cluster (the testkit's fake API server, which speaks the
// real list/watch protocol). Ctrl-C stops everything.
//
//   node scripts/demo.mjs [--dns-port=5353] [--check] [--auto-ports]
//     --check       start, verify the pod end to end, stop; exit 0 when every check passed
//     --auto-ports  pick free ports instead of the pod's usual ones (10053, 8081, 10055, 10054)
//     --ports-file=F  (for tests) free ports; once the pod is up, write its ports and ConfigMap
//                   directory to F as JSON and keep running until SIGTERM
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createWriteStream, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { datas, query } from '@kube-dns/dns-client';
import {
  clusterIPService, dnsmasqPath, endpointSlice, externalNameService, freePort, headlessService,
  APISERVER_BOOKMARK_INTERVAL_MS, startFakeApiServer, startTestDnsServer,
} from '@kube-dns/testkit';

const root = new URL('..', import.meta.url).pathname;
const usage = 'usage: node scripts/demo.mjs [--dns-port=5353] [--check] [--auto-ports]';
let args;
try {
  ({ values: args } = parseArgs({
    options: { check: { type: 'boolean' }, 'auto-ports': { type: 'boolean' }, 'dns-port': { type: 'string' }, 'ports-file': { type: 'string' } },
    strict: true,
  }));
} catch (e) {
  process.stderr.write(`demo: ${e.message}\n${usage}\n`);
  process.exit(2);
}
const check = args.check === true;
const portsFile = args['ports-file'];
const auto = args['auto-ports'] === true || check || portsFile !== undefined;
const isRoot = process.getuid?.() === 0;
const port = async (usual) => (auto ? freePort() : usual);
const dnsPort = Number(args['dns-port'] ?? (auto ? await freePort() : 5353));
if (!Number.isInteger(dnsPort) || dnsPort < 1 || dnsPort > 65535) {
  process.stderr.write(`demo: --dns-port=${args['dns-port']}: not a port (1-65535)\n${usage}\n`);
  process.exit(2);
}
const ports = {
  dns: dnsPort,
  kubedns: await port(10053),
  healthz: await port(8081),
  metrics: await port(10055),
  sidecar: await port(10054),
};
const scratch = check || portsFile !== undefined;
const work = join(root, '.demo', scratch ? `check-${process.pid}` : 'run');
const configDir = join(work, 'config');
const logDir = join(work, 'logs');
// Before anything is touched: a port in use (another demo, most likely) would leave this pod
// half up, and `.demo/run` is the running demo's ConfigMap and logs.
const taken = async (p, udp) =>
  new Promise((resolve) => {
    const s = udp ? createSocket('udp4') : createServer();
    s.once('error', () => resolve(true));
    const bound = () => s.close(() => resolve(false));
    if (udp) s.bind(p, '127.0.0.1', bound);
    else s.listen(p, '127.0.0.1', bound);
  });
const busy = [];
for (const [name, p] of Object.entries(ports)) {
  if (await taken(p, false)) busy.push(`${name} ${p}/tcp`);
  if ((name === 'dns' || name === 'kubedns') && (await taken(p, true))) busy.push(`${name} ${p}/udp`);
}
if (busy.length > 0) {
  process.stderr.write(`demo: port${busy.length > 1 ? 's' : ''} in use: ${busy.join(', ')} (another demo running? --auto-ports picks free ones)\n`);
  process.exit(1);
}
await rm(work, { recursive: true, force: true });
await mkdir(configDir, { recursive: true });
await mkdir(logDir, { recursive: true });
const say = (s) => process.stdout.write(`${s}\n`);

// --- the demo cluster
const api = await startFakeApiServer({ bookmarkIntervalMs: APISERVER_BOOKMARK_INTERVAL_MS });
api.upsert('services', clusterIPService('default', 'kubernetes', ['10.96.0.1'], [{ name: 'https', port: 443 }]));
api.upsert('services', clusterIPService('kube-system', 'kube-dns', ['10.96.0.10'], [{ name: 'dns', port: 53, protocol: 'UDP' }, { name: 'dns-tcp', port: 53 }]));
api.upsert('services', clusterIPService('shop', 'frontend', ['10.96.12.7', 'fd00:96::c:7'], [{ name: 'http', port: 80 }]));
api.upsert('services', headlessService('shop', 'db', [{ name: 'postgres', port: 5432 }]));
api.upsert('endpointslices', endpointSlice('shop', 'db', 'db-abcde', 'IPv4', [{ ip: '10.244.1.5', hostname: 'db-0' }, { ip: '10.244.2.9', hostname: 'db-1' }], [{ name: 'postgres', port: 5432 }]));
api.upsert('services', externalNameService('shop', 'payments', 'api.payments.example.com'));

// --- stand-ins for the outside world (there is no internet here): an "upstream" resolver and a corporate stub domain
const upstream = await startTestDnsServer({ answerIp: '192.0.2.80' });
const corp = await startTestDnsServer({ answerIp: '10.10.0.53' });
await writeFile(join(configDir, 'upstreamNameservers'), JSON.stringify([`127.0.0.1:${upstream.port}`]));
await writeFile(join(configDir, 'stubDomains'), JSON.stringify({ 'corp.internal': [`127.0.0.1:${corp.port}`] }));
await writeFile(join(configDir, 'hosts'), '# machines outside the cluster\n192.0.2.10 printer.office.lan\n');

// --- the pod's three containers
const children = [];
function start(name, bin, argv, env = {}) {
  const out = createWriteStream(join(logDir, `${name}.log`));
  const p = spawn(process.execPath, [join(root, 'packages', bin, 'bin', `${bin}.js`), ...argv], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  p.stdout.pipe(out);
  p.stderr.pipe(out);
  p.on('exit', (code, sig) => {
    if (stopping) return;
    say(`! ${name} exited (${code ?? sig}); see ${join(logDir, `${name}.log`)}`);
    // before the pod is up, waiting on would only end in a timeout that names the wrong thing
    if (!up) exitedAtStart ??= `${name} exited (${code ?? sig}) at start: ${lastLine(join(logDir, `${name}.log`))}`;
  });
  children.push({ name, p });
  return p;
}
let stopping = false;
let up = false;
let exitedAtStart;
const lastLine = (file) => {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').at(-1) ?? '';
  } catch {
    return '';
  }
};
// the downward API's variables: Events (bad ConfigMap edits, dnsmasq restarts) go to the demo cluster
const podEnv = { POD_NAME: 'kube-dns-demo', POD_NAMESPACE: 'kube-system', POD_UID: 'demo-pod-uid', NODE_NAME: 'demo-node' };
start('kubedns', 'kube-dns', [
  '--domain=cluster.local.', `--dns-port=${ports.kubedns}`, '--dns-bind-address=127.0.0.1', `--healthz-port=${ports.healthz}`,
  '--healthz-bind-address=127.0.0.1', `--config-dir=${configDir}`, `--kubecfg-file=${api.kubeconfigPath}`, '--v=2',
], { PROMETHEUS_PORT: String(ports.metrics), ...podEnv });
start('dnsmasq', 'dnsmasq-nanny', [
  '-v=2', '-logtostderr', `-configDir=${configDir}`, '-restartDnsmasq=true', `-stateDir=${join(work, 'nanny')}`,
  `-kubednsServer=127.0.0.1:${ports.kubedns}`, `-dnsmasqExec=${dnsmasqPath()}`, `-kubecfgFile=${api.kubeconfigPath}`, '--',
  '-k', '--cache-size=1000', '--no-negcache', '--dns-loop-detect', '--log-facility=-', `--port=${ports.dns}`,
  '--listen-address=127.0.0.1', '--bind-interfaces', '--no-hosts', '--conf-file=/dev/null', '--pid-file=', ...(isRoot ? ['--user=root'] : []),
  `--server=/cluster.local/127.0.0.1#${ports.kubedns}`, `--server=/in-addr.arpa/127.0.0.1#${ports.kubedns}`, `--server=/ip6.arpa/127.0.0.1#${ports.kubedns}`,
], podEnv);
const probeInterval = check ? 1 : 5;
start('sidecar', 'sidecar', [
  '--v=2', '--dnsmasq-addr=127.0.0.1', `--dnsmasq-port=${ports.dns}`, '--prometheus-addr=127.0.0.1', `--prometheus-port=${ports.sidecar}`,
  `--probe=kubedns,127.0.0.1:${ports.kubedns},kubernetes.default.svc.cluster.local,${probeInterval},SRV`,
  `--probe=dnsmasq,127.0.0.1:${ports.dns},kubernetes.default.svc.cluster.local,${probeInterval},SRV`,
]);

// Once: a second Ctrl-C while the pod stops waits for the same stop. keepLogs: a failed run's
// scratch directory stays for its logs.
let stopped;
let keepLogs = false;
function stopAll() {
  stopped ??= (async () => {
    stopping = true;
    await Promise.all(children.map(({ p }) => new Promise((r) => { if (p.exitCode !== null) return r(); p.once('exit', r); p.kill('SIGTERM'); setTimeout(() => p.kill('SIGKILL'), 6000).unref(); })));
    await Promise.all([api.close(), upstream.close(), corp.close()]);
    if (scratch && !keepLogs) await rm(work, { recursive: true, force: true });
  })();
  return stopped;
}
// From now on a signal stops the pod, also while the checks below run: the node default (exit at
// once) would leave kube-dns, the nanny, dnsmasq and the sidecar running on the pod's ports.
const onSignal = async () => { say('\nstopping the pod...'); await stopAll(); process.exit(check ? 1 : 0); };
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);
process.on('SIGHUP', onSignal); // the terminal closed: the same clean stop (the API server's token dir too)

async function until(what, fn, ms = 20000) {
  const deadline = Date.now() + ms;
  let last;
  for (;;) {
    if (exitedAtStart) throw new Error(exitedAtStart);
    try { const v = await fn(); if (v) return v; } catch (e) { last = e; }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms${last ? ` (${last.message})` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const dig = (name, type = 'A') => query({ host: '127.0.0.1', port: ports.dns }, { name, type, timeoutMs: 1000 }).then((r) => datas(r.packet.answers).sort().join(' '));
const http = (p, path) => fetch(`http://127.0.0.1:${p}${path}`).then(async (r) => ({ status: r.status, body: await r.text() }));

try {
  await until('dnsmasq answers a cluster name through kube-dns', async () => (await dig('kubernetes.default.svc.cluster.local')) === '10.96.0.1');
  up = true;
  const checks = [
    ['kubernetes.default.svc.cluster.local A', () => dig('kubernetes.default.svc.cluster.local'), '10.96.0.1'],
    ['frontend.shop.svc.cluster.local AAAA', () => dig('frontend.shop.svc.cluster.local', 'AAAA'), 'fd00:96::c:7'],
    ['db.shop.svc.cluster.local A (headless)', () => dig('db.shop.svc.cluster.local'), '10.244.1.5 10.244.2.9'],
    ['_postgres._tcp.db.shop.svc.cluster.local SRV', () => dig('_postgres._tcp.db.shop.svc.cluster.local', 'SRV'), '10 50 5432 db-0.db.shop.svc.cluster.local. 10 50 5432 db-1.db.shop.svc.cluster.local.'],
    ['payments.shop.svc.cluster.local A (ExternalName)', () => dig('payments.shop.svc.cluster.local'), '192.0.2.80 api.payments.example.com.'],
    ['7.12.96.10.in-addr.arpa PTR', () => dig('7.12.96.10.in-addr.arpa', 'PTR'), 'frontend.shop.svc.cluster.local.'],
    ['dns-version.cluster.local TXT', () => dig('dns-version.cluster.local', 'TXT'), '"1.1.0"'],
    ['printer.office.lan A (ConfigMap hosts)', () => dig('printer.office.lan'), '192.0.2.10'],
    ['wiki.corp.internal A (stub domain)', () => dig('wiki.corp.internal'), '10.10.0.53'],
    ['www.example.org A (upstream)', () => dig('www.example.org'), '192.0.2.80'],
  ];
  say(`\nThe kube-dns pod is up. Through dnsmasq on 127.0.0.1:${ports.dns}:`);
  let failed = 0;
  for (const [label, fn, want] of checks) {
    const got = await fn().catch((e) => `error: ${e.message}`);
    const ok = got === want;
    if (!ok) failed++;
    say(`  ${ok ? 'ok  ' : 'FAIL'} ${label.padEnd(50)} ${got}${ok ? '' : `   (want ${want})`}`);
  }
  // the cluster changes: a new service is answered through the whole pod
  api.upsert('services', clusterIPService('shop', 'cart', ['10.96.30.3']));
  await until('a new Service is answered through dnsmasq', async () => (await dig('cart.shop.svc.cluster.local')) === '10.96.30.3', 5000)
    .then(() => say('  ok   a Service created now is answered                    10.96.30.3'), (e) => { failed++; say(`  FAIL ${e.message}`); });
  const health = await until('sidecar reports both probes healthy', async () => {
    const [a, b] = await Promise.all([http(ports.sidecar, '/healthcheck/kubedns'), http(ports.sidecar, '/healthcheck/dnsmasq')]);
    return a.status === 200 && b.status === 200 ? [a, b] : undefined;
  }, 20000).catch((e) => { failed++; say(`  FAIL ${e.message}`); });
  if (health) say('  ok   sidecar /healthcheck/kubedns and /healthcheck/dnsmasq  200');
  const metrics = await http(ports.sidecar, '/metrics');
  const hits = /^kubedns_dnsmasq_hits (\d+)/m.exec(metrics.body);
  say(`  ${hits ? 'ok  ' : 'FAIL'} sidecar /metrics kubedns_dnsmasq_hits                 ${hits?.[1] ?? 'missing'}`);
  if (!hits) failed++;
  const ready = await http(ports.healthz, '/readiness');
  say(`  ${ready.status === 200 ? 'ok  ' : 'FAIL'} kube-dns /readiness                                   ${ready.status}`);
  if (ready.status !== 200) failed++;

  if (check) {
    say(failed ? `\ndemo check: ${failed} FAILED (logs in ${logDir})` : '\ndemo check: all passed');
    if (failed) for (const { name } of children) say(`--- ${name} log: ${join(logDir, `${name}.log`)}`);
    keepLogs = failed > 0;
    await stopAll();
    process.exit(failed ? 1 : 0);
  }
  if (portsFile !== undefined) {
    // written whole, then renamed: a test polling for the file never reads half of it
    await writeFile(`${portsFile}.tmp`, JSON.stringify({ ...ports, api: api.url, configDir, upstream: upstream.port, stub: corp.port, failed }));
    await rename(`${portsFile}.tmp`, portsFile);
  } else {
    say(`
Try it:
  dig @127.0.0.1 -p ${ports.dns} kubernetes.default.svc.cluster.local        # through dnsmasq (the pod's port 53)
  dig @127.0.0.1 -p ${ports.kubedns} _postgres._tcp.db.shop.svc.cluster.local SRV   # kube-dns directly
  curl -s 127.0.0.1:${ports.healthz}/cache | head          # kube-dns records   (/readiness, /healthz)
  curl -s 127.0.0.1:${ports.metrics}/metrics | grep kubedns_dns_requests_total
  curl -s 127.0.0.1:${ports.sidecar}/metrics | grep kubedns_   # sidecar (/healthcheck/kubedns, /healthcheck/dnsmasq)
  Edit the ConfigMap: files in ${configDir} (stubDomains, upstreamNameservers, hosts) apply live;
  each edit is an Event (InvalidConfig or ConfigApplied), as are dnsmasq restarts (kill -9 it):
  curl -s -H 'Authorization: Bearer ${api.token}' ${api.url}/api/v1/namespaces/kube-system/events
  Logs: ${logDir}
Ctrl-C stops the pod.`);
  }
} catch (e) {
  say(`\ndemo failed: ${e.message}\nlogs: ${logDir}`);
  keepLogs = true;
  await stopAll().catch(() => undefined);
  process.exit(1);
}
