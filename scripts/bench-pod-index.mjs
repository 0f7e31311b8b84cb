#!/usr/bin/env node
// The heap that autopath's pod index (and the zone's pod records) keep per pod (docs/footprint.md).
// Feeds the Pods watch's objects as kube-dns gets them (JSON parsed one event at a time, through
// podFromKube, the reflector's KnownObjects, and app.ts's tee: the zone, then the index) for a
// cluster of --pods pods (default 100,000) in 50-500 namespaces (--namespaces, default 300):
// Deployment pods (`web-7d9f8c6b5-x2k4q`), StatefulSet pods, Jobs that finish; a /24 of pod IPs
// per node, one pod in five dual-stack, four hostNetwork pods per node on its IP (a /16 of node
// IPs); then churn: rollouts (a pod added without an IP, given one, updated, the old one
// deleted), Jobs finishing and going, a namespace deleted and another created.
// Each setting runs in a child process (node --expose-gc); retained heap is heapUsed after full
// collections, against the same run with only the reflector fed:
//   reflector only | + index (--autopath) | + zone (--pods=verified) | + zone + index (both)
//   node scripts/bench-pod-index.mjs [--pods N] [--namespaces N] [--churn N]
import { execFileSync } from 'node:child_process';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : dflt;
};
const PODS = arg('--pods', 100_000);
const NAMESPACES = arg('--namespaces', 300);
const CHURN = arg('--churn', 30_000);
const setting = process.argv[process.argv.indexOf('--setting') + 1];

if (!process.argv.includes('--setting')) {
  const say = (s) => process.stdout.write(`${s}\n`);
  const heap = {};
  for (const s of ['reflector', 'index', 'zone', 'both']) {
    const out = execFileSync(process.execPath, ['--expose-gc', new URL(import.meta.url).pathname, ...process.argv.slice(2), '--setting', s], {
      encoding: 'utf8',
    });
    heap[s] = JSON.parse(out);
  }
  const live = heap.both.pods;
  const per = (a, b) => `${((heap[a].heap - heap[b].heap) / live).toFixed(0)} B/pod (${((heap[a].heap - heap[b].heap) / 1e6).toFixed(1)} MB)`;
  say(`${PODS} pods, ${NAMESPACES} namespaces, ${CHURN} churn events: ${live} pods live in the zone, ${heap.both.indexed} in the index`);
  say(`  index, --autopath alone (reflector + index - reflector):        ${per('index', 'reflector')}`);
  say(`  zone pod records, --pods=verified (reflector + zone - reflector): ${per('zone', 'reflector')}`);
  say(`  index on top of the zone (both - zone):                         ${per('both', 'zone')}`);
  say(`  zone + index (both - reflector):                                ${per('both', 'reflector')}`);
  process.exit(0);
}

const root = new URL('../packages/kube-dns/dist/src/', import.meta.url);
const { podFromKube } = await import(new URL('records/from-kube.js', root));
const { Zone } = await import(new URL('records/zone.js', root));
const { PodIpIndex } = await import(new URL('autopath/pod-index.js', root));
const { KnownObjects, compactVersion } = await import(new URL('kube/known-objects.js', root));

// a fixed pseudo-random sequence (mulberry32), the same in every child
let seed = 0x5eed;
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const pick = (n) => Math.floor(rand() * n);
const ALNUM = 'bcdfghjklmnpqrstvwxz2456789';
const word = (n) => Array.from({ length: n }, () => ALNUM[pick(ALNUM.length)]).join('');
const APPS = ['web', 'api', 'worker', 'redis', 'postgres', 'frontend', 'checkout', 'cart', 'search', 'ingest', 'metrics-agent'];

const gc = globalThis.gc;
const known = new KnownObjects();
const zone = setting === 'zone' || setting === 'both' ? new Zone() : undefined;
const index = setting === 'index' || setting === 'both' ? new PodIpIndex() : undefined;
let rv = 1000;
// what the reflector and app.ts's tee do with one watch event
const apply = (type, obj) => {
  const o = JSON.parse(JSON.stringify(obj)); // a watch event's strings are the parser's, one per event
  const { namespace, name } = o.metadata;
  if (type === 'DELETED') {
    known.delete(namespace, name);
    zone?.deletePod(namespace, name);
    index?.deletePod(namespace, name);
    return;
  }
  known.set(namespace, name, compactVersion(o.metadata.resourceVersion));
  const p = podFromKube(o);
  zone?.setPod(p);
  index?.setPod(p);
};
const podObject = (namespace, name, node, ips, phase, hostNetwork) => ({
  metadata: { namespace, name, resourceVersion: String(rv++), uid: `${word(8)}-${word(4)}-${word(4)}`, labels: { app: name.split('-')[0] } },
  spec: { nodeName: `node-${node}`, hostNetwork, containers: [{ name: 'main', image: 'registry.example/app:1.2.3' }] },
  status: { phase, podIP: ips[0], podIPs: ips.map((ip) => ({ ip })), hostIP: nodeIp(node) },
});

const NODES = Math.max(1, Math.ceil(PODS / 30));
const nodeIp = (n) => `192.168.${n >> 8}.${n & 255}`;
const freeIps = Array.from({ length: NODES }, () => []);
const nextHost = new Array(NODES).fill(1);
const podIp = (node) => {
  const h = freeIps[node].length > 200 ? freeIps[node].shift() : nextHost[node]++;
  return [`10.${128 + (node >> 8)}.${node & 255}.${h & 255}`, h];
};
let namespaces = Array.from({ length: NAMESPACES }, (_, i) => `team-${word(5)}-${i}`);
/** key → the pod as last sent, for updates and deletes */
const live = new Map();
const create = (namespace, name, node, dual, kind) => {
  const [v4, h] = podIp(node);
  const ips = dual ? [v4, `fd00:10:244:${node.toString(16)}::${h.toString(16)}`] : [v4];
  apply('ADDED', podObject(namespace, name, node, [], 'Pending', false));
  const o = podObject(namespace, name, node, ips, 'Running', false);
  apply('MODIFIED', o);
  live.set(`${namespace}/${name}`, { o, node, h, kind });
};
const remove = (key) => {
  const p = live.get(key);
  if (!p) return;
  live.delete(key);
  apply('DELETED', p.o);
  if (!p.o.spec.hostNetwork) freeIps[p.node].push(p.h);
};
const addWorkload = (namespace) => {
  const r = rand();
  if (r < 0.75) {
    const app = `${APPS[pick(APPS.length)]}-${word(3)}`;
    const rs = word(9);
    const replicas = 1 + pick(6);
    for (let i = 0; i < replicas; i++) create(namespace, `${app}-${rs}-${word(5)}`, pick(NODES), rand() < 0.2, 'deploy');
    return replicas;
  }
  if (r < 0.9) {
    const app = `${APPS[pick(APPS.length)]}-${word(3)}`;
    for (let i = 0; i < 3; i++) create(namespace, `${app}-${i}`, pick(NODES), rand() < 0.2, 'sts');
    return 3;
  }
  create(namespace, `job-${word(6)}-${word(5)}`, pick(NODES), false, 'job');
  return 1;
};

// hostNetwork pods: four per node, on the node's IP
const DAEMONS = [
  ['kube-system', 'kube-proxy'],
  ['kube-system', 'calico-node'],
  ['monitoring', 'node-exporter'],
  ['logging', 'fluent-bit'],
];
for (let n = 0; n < NODES && live.size < PODS; n++) {
  for (const [ns, ds] of DAEMONS) {
    const name = `${ds}-${word(5)}`;
    const o = podObject(ns, name, n, [nodeIp(n)], 'Running', true);
    apply('ADDED', o);
    live.set(`${ns}/${name}`, { o, node: n, h: 0, kind: 'ds' });
  }
}
while (live.size < PODS) addWorkload(namespaces[pick(namespaces.length)]);

// churn
const keys = () => [...live.keys()];
let pool = keys();
for (let e = 0; e < CHURN; ) {
  const r = rand();
  if (pool.length < 1000) pool = keys();
  if (r < 0.8) {
    // a rollout step: a new pod of the same ReplicaSet shape, then the old one goes
    const key = pool.splice(pick(pool.length), 1)[0];
    const p = live.get(key);
    if (!p || p.kind !== 'deploy') continue;
    const { namespace, name } = p.o.metadata;
    create(namespace, `${name.slice(0, name.lastIndexOf('-'))}-${word(5)}`, pick(NODES), p.o.status.podIPs.length > 1, 'deploy');
    remove(key);
    e += 4;
  } else if (r < 0.95) {
    // a Job runs, succeeds (keeping its IP in status), and is deleted later
    const namespace = namespaces[pick(namespaces.length)];
    const name = `job-${word(6)}-${word(5)}`;
    create(namespace, name, pick(NODES), false, 'job');
    const p = live.get(`${namespace}/${name}`);
    p.o = { ...p.o, metadata: { ...p.o.metadata, resourceVersion: String(rv++) }, status: { ...p.o.status, phase: 'Succeeded' } };
    apply('MODIFIED', p.o);
    if (rand() < 0.7) remove(`${namespace}/${name}`);
    e += 3;
  } else {
    // a namespace goes (all its pods), another comes with as many pods
    const gone = namespaces.splice(pick(namespaces.length), 1)[0];
    let n = 0;
    for (const key of keys()) if (key.startsWith(`${gone}/`)) (remove(key), n++);
    const fresh = `team-${word(5)}-${rv}`;
    namespaces.push(fresh);
    for (let made = 0; made < n; ) made += addWorkload(fresh);
    pool = keys();
    e += 2 * n;
  }
}
pool = undefined;

// what stays: drop the script's own bookkeeping, then collect
const pods = live.size;
const indexed = index?.size ?? 0;
live.clear();
freeIps.length = 0;
namespaces = undefined;
for (let i = 0; i < 4; i++) gc();
process.stdout.write(JSON.stringify({ heap: process.memoryUsage().heapUsed, pods, indexed, keep: [known.size, zone, index].length }));
