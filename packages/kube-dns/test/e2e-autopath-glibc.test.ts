// autopath end to end with a real glibc resolver: a network namespace stands for a client pod
// of namespace `shop` (its own IP on a veth pair, kubelet's resolv.conf for a ClusterFirst pod:
// search shop.svc.cluster.local svc.cluster.local cluster.local, ndots:5). Its nameserver is
// the kube-dns pod's dnsmasq (the manifest's arguments, listening on the host end of the veth,
// port 53 as resolv.conf requires) in front of kube-dns. `getent ahosts` of an external name
// counts the questions that reach kube-dns, with and without --autopath.
// Needs root (ip netns, veth, port 53), as CI runs the suite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { clusterIPService, pod } from '@kube-dns/testkit';
import { manifestOptionalArg } from './autopath-helpers.js';
import { startPod, type Pod } from './pod-through-dnsmasq.js';

interface Netns {
  name: string;
  hostIp: string;
  podIp: string;
  /**
   * Runs a command inside the namespace (ip netns exec mounts /etc/netns/<name>/resolv.conf).
   * Asynchronous: kube-dns, the fake API server and the upstream run in this process.
   */
  run(cmd: string[]): Promise<{ code: number; stdout: string }>;
  remove(): void;
}

function ip(...args: string[]): string {
  return execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A namespace with a veth pair to the host on a /30 of 100.64.0.0/10 that no interface uses yet. */
function createNetns(): Netns {
  if (process.getuid?.() !== 0) throw new Error('this test creates a network namespace and listens on port 53: run it as root (CI does)');
  const used = ip('-4', '-o', 'addr');
  let a = 0;
  let b = 0;
  do {
    a = 64 + Math.floor(Math.random() * 64);
    b = Math.floor(Math.random() * 256);
  } while (used.includes(` 100.${a}.${b}.`));
  const tag = `kdap${process.pid % 10_000_000}`;
  const name = `${tag}-ns`;
  const hostIp = `100.${a}.${b}.1`;
  const podIp = `100.${a}.${b}.2`;
  const remove = () => {
    try {
      ip('netns', 'del', name); // takes the veth pair with it
    } catch {
      // not created
    }
    rmSync(`/etc/netns/${name}`, { recursive: true, force: true });
  };
  remove();
  try {
    ip('netns', 'add', name);
    ip('link', 'add', `${tag}h`, 'type', 'veth', 'peer', 'name', `${tag}p`);
    ip('link', 'set', `${tag}p`, 'netns', name);
    ip('addr', 'add', `${hostIp}/30`, 'dev', `${tag}h`);
    ip('link', 'set', `${tag}h`, 'up');
    ip('netns', 'exec', name, 'ip', 'addr', 'add', `${podIp}/30`, 'dev', `${tag}p`);
    ip('netns', 'exec', name, 'ip', 'link', 'set', `${tag}p`, 'up');
    ip('netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up');
    mkdirSync(`/etc/netns/${name}`, { recursive: true });
    // what kubelet writes for a ClusterFirst pod of namespace shop
    writeFileSync(`/etc/netns/${name}/resolv.conf`, `nameserver ${hostIp}\nsearch shop.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5\n`);
  } catch (e) {
    remove();
    throw e;
  }
  return {
    name,
    hostIp,
    podIp,
    run: (cmd) =>
      new Promise((resolve) => {
        execFile('ip', ['netns', 'exec', name, ...cmd], { encoding: 'utf8', timeout: 20_000 }, (err, stdout) => {
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout });
        });
      }),
    remove,
  };
}

/** Every question kube-dns answered so far (kubedns_dns_requests_total summed), by rcode too. */
async function kubeDnsQuestions(p: Pod): Promise<{ total: number; byRcode: Record<string, number> }> {
  const body = (await p.cluster.http('/metrics')).body;
  const byRcode: Record<string, number> = {};
  let total = 0;
  for (const m of body.matchAll(/^kubedns_dns_requests_total\{[^}]*rcode="(\w+)"[^}]*\} (\d+)/gm)) {
    byRcode[m[1]!] = (byRcode[m[1]!] ?? 0) + Number(m[2]);
    total += Number(m[2]);
  }
  return { total, byRcode };
}

function diff(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v - (before[k] ?? 0) > 0) out[k] = v - (before[k] ?? 0);
  return out;
}

async function lookupThroughPod(autopath: boolean) {
  const ns = createNetns();
  let p: Pod | undefined;
  try {
    p = await startPod({
      upstreamHandler: (q) =>
        q.name === 'www.example.test' ? (q.type === 'A' ? { answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.44' }] } : {}) : { rcode: 'NXDOMAIN' },
      extraKubednsArgs: autopath ? [manifestOptionalArg('--autopath')] : [],
      extraDnsmasqArgs: autopath ? [manifestOptionalArg('--add-subnet'), manifestOptionalArg('--strip-subnet')] : [],
      dnsmasqListen: { host: ns.hostIp, port: 53 },
      seed: (api) => {
        api.upsert('pods', pod('shop', 'client-0', [ns.podIp]));
        api.upsert('services', clusterIPService('bank', 'api', ['10.3.0.7']));
      },
    });
    const before = await kubeDnsQuestions(p);
    const r = await ns.run(['getent', 'ahosts', 'www.example.test']);
    const after = await kubeDnsQuestions(p);
    // less the loop probes: kube-dns's (*.invalid) and dnsmasq's --dns-loop-detect (<hex>.test TXT)
    const upstream = p.upstream.questions.filter((q) => !q.name.endsWith('.invalid') && q.type !== 'TXT').map((q) => `${q.name} ${q.type}`);
    // a Service of another namespace by its short name: the second cluster search name exists
    const short = await ns.run(['getent', 'ahosts', 'api.bank']);
    const afterShort = await kubeDnsQuestions(p);
    const metrics = (await p.cluster.http('/metrics')).body;
    return {
      getent: r,
      reachedKubeDns: after.total - before.total,
      byRcode: diff(after.byRcode, before.byRcode),
      upstream,
      metrics,
      short: { getent: short, reachedKubeDns: afterShort.total - after.total, byRcode: diff(afterShort.byRcode, after.byRcode) },
    };
  } finally {
    await p?.stop();
    ns.remove();
  }
}

test('glibc in a pod network namespace: an external name costs 6 questions to kube-dns without autopath, 2 with it; another namespace\'s Service 4, then 2', async () => {
  const plain = await lookupThroughPod(false);
  assert.equal(plain.getent.code, 0, 'getent resolved the name');
  assert.match(plain.getent.stdout, /^192\.0\.2\.44\s/m);
  // A and AAAA for each of the three cluster search names, all NXDOMAIN, then the name upstream
  assert.equal(plain.reachedKubeDns, 6, `questions that reached kube-dns: ${JSON.stringify(plain.byRcode)}`);
  assert.deepEqual(plain.byRcode, { NXDOMAIN: 6 });

  // api.bank: A and AAAA of api.bank.shop.svc (NXDOMAIN), then of api.bank.svc (the address; NODATA)
  assert.match(plain.short.getent.stdout, /^10\.3\.0\.7\s/m);
  assert.equal(plain.short.reachedKubeDns, 4, JSON.stringify(plain.short.byRcode));

  const auto = await lookupThroughPod(true);
  assert.equal(auto.getent.code, 0, 'getent resolved the name with autopath');
  assert.match(auto.getent.stdout, /^192\.0\.2\.44\s/m, 'glibc followed the CNAME to the address');
  // A and AAAA of www.example.test.shop.svc.cluster.local, each completed in one round trip
  assert.equal(auto.reachedKubeDns, 2, `questions that reached kube-dns: ${JSON.stringify(auto.byRcode)}`);
  assert.deepEqual(auto.byRcode, { NOERROR: 2 });
  assert.match(auto.metrics, /^kubedns_autopath_total\{result="upstream"\} 1$/m, 'the A');
  // api.bank: the first expansion completed to the cluster name, for A and AAAA
  assert.match(auto.short.getent.stdout, /^10\.3\.0\.7\s/m, 'glibc followed the CNAME to the Service');
  assert.equal(auto.short.reachedKubeDns, 2, JSON.stringify(auto.short.byRcode));
  assert.deepEqual(auto.short.byRcode, { NOERROR: 2 });
  assert.match(auto.metrics, /^kubedns_autopath_total\{result="cluster"\} 1$/m, 'the A');
  // both AAAA were NODATA (no IPv6 address): no completion, counted apart (glibc stopped at its A's answer)
  assert.match(auto.metrics, /^kubedns_autopath_total\{result="nodata"\} 2$/m);
  // the upstream was asked for the name itself only (by kube-dns), never for a search expansion
  assert.ok(auto.upstream.length > 0 && auto.upstream.every((q) => q.startsWith('www.example.test ')), auto.upstream.join(', '));
});

type UpstreamHandler = NonNullable<NonNullable<Parameters<typeof startPod>[0]>['upstreamHandler']>;

/** `getent ahosts` of each name from the pod, and the metrics after. */
async function getentThroughPod(autopath: boolean, names: string[], upstreamHandler: UpstreamHandler) {
  const ns = createNetns();
  let p: Pod | undefined;
  try {
    p = await startPod({
      upstreamHandler,
      extraKubednsArgs: autopath ? [manifestOptionalArg('--autopath')] : [],
      extraDnsmasqArgs: autopath ? [manifestOptionalArg('--add-subnet'), manifestOptionalArg('--strip-subnet')] : [],
      dnsmasqListen: { host: ns.hostIp, port: 53 },
      seed: (api) => api.upsert('pods', pod('shop', 'client-0', [ns.podIp])),
    });
    const out: Record<string, { code: number; stdout: string }> = {};
    for (const n of names) out[n] = await ns.run(['getent', 'ahosts', n]);
    return { out, metrics: (await p.cluster.http('/metrics')).body };
  } finally {
    await p?.stop();
    ns.remove();
  }
}

test('glibc: a Service of the pod\'s own namespace that does not exist, as `redis.shop` or `cache.shop.svc.cluster.local`, is not found, with autopath as without', async () => {
  // the upstream has `redis` and `cache` (names that are not the Services): a later name of the
  // pod's own search taken for a first question would be completed to them
  const handler: UpstreamHandler = (q) =>
    q.name === 'redis' || q.name === 'cache' ? { answers: q.type === 'A' ? [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.66' }] : [] } : { rcode: 'NXDOMAIN' };
  const names = ['redis.shop', 'cache.shop.svc.cluster.local'];
  const plain = await getentThroughPod(false, names, handler);
  const auto = await getentThroughPod(true, names, handler);
  for (const n of names) {
    assert.equal(plain.out[n]!.code, 2, `${n} without autopath: not found`);
    assert.equal(auto.out[n]!.code, 2, `${n} with autopath: not found, never another host (${auto.out[n]!.stdout.trim()})`);
    assert.equal(auto.out[n]!.stdout, '');
  }
  // redis.shop.svc.cluster.local (second name of redis.shop's search; cache.shop.svc.cluster.local
  // asked as is, last), A and AAAA each: the pod's own search, counted
  assert.match(auto.metrics, /^kubedns_autopath_total\{result="later_search_name"\} 4$/m);
  assert.match(auto.metrics, /^kubedns_autopath_total\{result="not_found"\} 4$/m);
  assert.match(auto.metrics, /^kubedns_autopath_total\{result="upstream"\} 0$/m);
});
