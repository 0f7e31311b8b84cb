// Negative answers decided from the question's bytes (resolve/absent.ts, records/presence-index.ts):
// the replies must be, byte for byte, what the full resolver gives, for any name, and the index
// must never call a present service absent, through growth, churn and namespaces of hundreds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { silentLogger } from '@kube-dns/config';
import { Forwarder } from '../src/forward/forwarder.js';
import { Zone } from '../src/records/zone.js';
import { AbsentNames } from '../src/resolve/absent.js';
import { resolve } from '../src/resolve/resolve.js';
import type { ResolveOptions } from '../src/resolve/types.js';
import { DnsHandler } from '../src/server/handler.js';
import { fuzzSeed, realisticZone } from './fuzz-kit.js';
import { clusterIP } from './resolve-fixtures.js';
import { labelsOf, rawQuery } from './wire-check.js';

const log = silentLogger();
const RCODE_NXDOMAIN = 3;

/** Two handlers over one zone: the production one, and one that always resolves. */
function pair(zone: Zone, opts: ResolveOptions, synced = true) {
  const absent = new AbsentNames(opts, zone.presence);
  let decided = 0;
  const counting = Object.assign(Object.create(absent) as AbsentNames, {
    isAbsent(buf: Uint8Array, off: number): boolean {
      const yes = absent.isAbsent(buf, off);
      if (yes) decided++;
      return yes;
    },
  });
  const common = {
    zone,
    resolve: (name: string, qtype: string, lname: string) => resolve(zone, name, qtype, opts, lname),
    forwarder: new Forwarder({ log, timeoutMs: 50 }), // no upstreams: forwarded names get SERVFAIL
    isSynced: () => synced,
    log,
    malformedRepliesPerSecond: Infinity,
  };
  return {
    fast: new DnsHandler({ ...common, absent: counting }),
    full: new DnsHandler(common),
    get decided() {
      return decided;
    },
  };
}

/** A name's wire labels with random capitals (0x20 spelling, as some resolvers send). */
function spelled(name: string, rng: { int(n: number): number }): Buffer[] {
  return labelsOf(name).map((l) => Buffer.from([...l].map((b) => (b >= 0x61 && b <= 0x7a && rng.int(3) === 0 ? b - 0x20 : b))));
}

test('every name gets the same reply bytes with and without the byte-level negative answers (seeded; KUBE_DNS_FUZZ_SEED replays)', async (t) => {
  const { seed, rng } = fuzzSeed(t);
  const { zone, names } = realisticZone();
  for (const wildcards of [false, true]) {
    const opts: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'insecure', serial: 1, wildcards };
    const h = pair(zone, opts);
    const external = ['example.com', 'www.google.com', 'api', 'registry-1.docker.io', 'a.b.c.d.e', '*', 'svc', 'pod', 'dns', 'dns-version', 'default', 'team-3', 'svc-1'];
    const zones = ['cluster.local', 'CLUSTER.Local', 'xcluster.local', 'cluster.localx', 'local', 'cluster.local.evil', 'svc.cluster.local'];
    const namespaces = ['default', 'team-3', 'team-19', 'nosuch', '*', 'svc', 'kube-system'];
    let expansions = 0;
    let expansionsDecided = 0;
    const n = 6000;
    for (let i = 0; i < n; i++) {
      let name: string;
      const kind = rng.int(5);
      if (kind === 0) name = rng.pick(names);
      else if (kind === 1) name = `${rng.pick(external)}.${rng.pick(namespaces)}.svc.${rng.pick(zones)}`;
      else if (kind === 2) name = `${rng.pick(external)}.svc.${rng.pick(zones)}`;
      else if (kind === 3) name = `${rng.pick(external)}.${rng.pick(zones)}`;
      else name = `${rng.pick(['svc-1', 'svc-7', 'svc-10', '_http._tcp.svc-5', 'pod-1.svc-5', '*', 'nope'])}.${rng.pick(namespaces)}.svc.cluster.local`;
      const qtype = rng.pick([1, 28, 33, 12, 16, 5, 65, 99]);
      const edns = rng.pick([undefined, 512, 1232]);
      const transport = rng.int(4) === 0 ? 'tcp' : 'udp';
      const labels = spelled(name, rng);
      const q = rawQuery(rng.int(65536), labels, qtype, edns);
      const before = h.decided;
      const a = (await h.fast.handle(q, transport)) as Buffer;
      const b = (await h.full.handle(Buffer.from(q), transport)) as Buffer;
      // answers of two records or more are rotated by a counter of the process (server/rotate.ts),
      // which each handler's reply moves on: those two may differ in order only
      const rotated = a.length === b.length && a.subarray(0, 12).equals(b.subarray(0, 12)) && (a[3]! & 0xf) === 0 && a.readUInt16BE(6) >= 2;
      if ((b[3]! & 0xf) === RCODE_NXDOMAIN && kind >= 1 && kind <= 3) {
        expansions++;
        if (h.decided > before) expansionsDecided++;
      }
      if (!a.equals(b) && !rotated) {
        assert.fail(`seed ${seed}, wildcards ${wildcards}: ${labels.map((l) => l.toString('latin1')).join('.')} type ${qtype} edns ${edns} ${transport}\nfast ${a.toString('hex')}\nfull ${b.toString('hex')}`);
      }
    }
    // it does decide: most search-path expansions never reach the resolver (a decider that
    // always said "not known" would pass the comparison above)
    t.diagnostic(`wildcards ${wildcards}: ${h.decided} of ${n} names decided from the bytes, ${expansionsDecided} of the ${expansions} search-path expansions answered NXDOMAIN`);
    assert.ok(expansionsDecided > expansions * 0.6, `only ${expansionsDecided} of ${expansions} expansions answered NXDOMAIN were decided from the bytes`);
  }
});

test('a name decided absent from its bytes is NXDOMAIN, as the resolver says, for the common expansions', async () => {
  const zone = new Zone();
  zone.setService(clusterIP('default', 'web', ['10.0.0.1']));
  const opts: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'disabled', serial: 1 };
  const absent = new AbsentNames(opts, zone.presence);
  const at = (name: string) => absent.isAbsent(rawQuery(1, labelsOf(name), 1), 12);
  // what resolve() answers NXDOMAIN, and what it does not
  for (const name of ['www.google.com.default.svc.cluster.local', 'www.google.com.svc.cluster.local', 'www.google.com.cluster.local', 'nosuch.svc.cluster.local', 'WWW.Example.COM.Cluster.Local']) {
    assert.equal(resolve(zone, name, 'A', opts).rcode, 'NXDOMAIN', name);
    assert.equal(at(name), true, name);
  }
  for (const name of ['web.default.svc.cluster.local', 'WEB.Default.svc.cluster.local', 'default.svc.cluster.local', 'svc.cluster.local', 'cluster.local', 'x.pod.cluster.local', 'dns-version.cluster.local', 'ns.dns.cluster.local', 'www.google.com']) {
    assert.equal(at(name), false, name);
  }
});

test('the presence index never calls a present service absent, through growth, churn and namespaces of over 255', () => {
  const zone = new Zone({ wildcards: false });
  const opts: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'disabled', serial: 1 };
  const absent = new AbsentNames(opts, zone.presence);
  const isAbsent = (name: string) => absent.isAbsent(rawQuery(1, labelsOf(name), 1), 12);
  const live = new Set<string>();
  const add = (ns: string, name: string) => {
    zone.setService(clusterIP(ns, name, ['10.0.0.1']));
    live.add(`${name}.${ns}`);
  };
  const del = (ns: string, name: string) => {
    zone.deleteService(ns, name);
    live.delete(`${name}.${ns}`);
  };
  const checkLive = (stage: string) => {
    for (const k of live) {
      assert.equal(isAbsent(`${k}.svc.cluster.local`), false, `${stage}: ${k} present`);
      assert.equal(isAbsent(`${k.slice(k.indexOf('.') + 1)}.svc.cluster.local`), false, `${stage}: namespace of ${k} present`);
    }
  };
  /** Share of `count` services deleted or never made that the index calls absent. */
  const absentShare = (names: string[]) => names.filter((n) => isAbsent(`${n}.svc.cluster.local`)).length / names.length;

  // 20 namespaces of 256-259 (a byte's count would wrap: their slots stay at 255), 200 of one service each, and 3,000 services
  // across 30 (the table grows)
  for (let k = 0; k < 20; k++) for (let i = 0; i < 256 + (k % 4); i++) add(`big-${k}`, `s${i}`);
  for (let k = 0; k < 200; k++) add(`one-${k}`, 'only');
  for (let i = 0; i < 3000; i++) add(`ns-${i % 30}`, `svc-${i}`);
  checkLive('after growth');
  const large = zone.presence.bytes;
  assert.ok(large >= 8300 * 8, `${large} bytes for 8,300 services`);

  // empty the big namespaces and the small ones, and delete most of the rest: counts go down,
  // and the removals rebuild
  for (let k = 0; k < 20; k++) for (let i = 0; i < 256 + (k % 4); i++) del(`big-${k}`, `s${i}`);
  for (let k = 0; k < 200; k++) del(`one-${k}`, 'only');
  checkLive('after emptying namespaces');
  const gone: string[] = [];
  for (let i = 0; i < 3000; i++) {
    if (i % 10 !== 0) {
      del(`ns-${i % 30}`, `svc-${i}`);
      gone.push(`svc-${i}.ns-${i % 30}`);
    }
  }
  checkLive('after churn');
  assert.ok(zone.presence.bytes < large, `the table shrinks after a rebuild: ${zone.presence.bytes} bytes`);
  assert.ok(absentShare(gone) > 0.8, `deleted services are absent again: ${absentShare(gone)}`);
  const emptied = Array.from({ length: 20 }, (_, k) => `big-${k}`).concat(Array.from({ length: 200 }, (_, k) => `one-${k}`));
  const emptiedAbsent = emptied.filter((ns) => isAbsent(`${ns}.svc.cluster.local`));
  // a taken slot (another name's, about one in twelve here) leaves a name to the resolver
  assert.ok(emptiedAbsent.length > emptied.length * 0.8, `namespaces whose last service went are absent: ${emptiedAbsent.length} of ${emptied.length}`);
  assert.ok(emptiedAbsent.filter((ns) => ns.startsWith('big-')).length >= 12, `saturated namespaces come back after a rebuild: ${emptiedAbsent.join(' ')}`);
  // added back
  for (let i = 0; i < 3000; i += 7) add(`ns-${i % 30}`, `svc-${i}`);
  checkLive('after re-adding');
  const never = Array.from({ length: 2000 }, (_, i) => `never-${i}.ns-${i % 30}`);
  assert.ok(absentShare(never) > 0.8, `names never made are absent: ${absentShare(never)}`);
});

test('before the first sync a name absent by its bytes is SERVFAIL, not NXDOMAIN', async () => {
  const zone = new Zone();
  const opts: ResolveOptions = { zone: 'cluster.local', ttl: 30, pods: 'disabled', serial: 1 };
  const h = pair(zone, opts, false);
  const reply = (await h.fast.handle(rawQuery(7, labelsOf('www.google.com.default.svc.cluster.local'), 1), 'udp')) as Buffer;
  assert.equal(reply[3]! & 0xf, 2);
  const synced = pair(zone, opts, true);
  const after = (await synced.fast.handle(rawQuery(7, labelsOf('www.google.com.default.svc.cluster.local'), 1), 'udp')) as Buffer;
  assert.equal(after[3]! & 0xf, RCODE_NXDOMAIN);
  assert.equal(synced.decided, 1);
});
