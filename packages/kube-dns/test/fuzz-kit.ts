// The seeded fuzz kit of the handler tests: a replayable PRNG and a zone shaped like a cluster's.
import type { PodInfo } from '../src/records/types.js';
import { Zone } from '../src/records/zone.js';
import { clusterIP, ep, externalName, headless, port, slice } from './resolve-fixtures.js';

/** mulberry32: a small seeded PRNG, so a failing run replays exactly. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick<T>(xs: readonly T[]): T {
      return xs[Math.floor(next() * xs.length)]!;
    },
  };
}

/** Pods over a small cast, changed at random, and a model of them (the pod-index and zone-pod fuzz tests). */
export interface PodCast {
  namespaces: readonly string[];
  names: readonly string[];
  ips: readonly string[];
  /** Whether pods may be hostNetwork (autopath's index tells them apart; the zone does not). */
  hostNetwork?: boolean;
}

/**
 * One random step of pod churn: a pod deleted (3 in 10), or set with 0 to 2 IPs (sometimes one
 * listed twice; half the time the IPs it had: a status update), finished 1 in 10. The model and
 * the log (its last lines say what led to a failure) follow.
 */
export function podChurnStep(
  rng: ReturnType<typeof prng>,
  cast: PodCast,
  model: Map<string, PodInfo>,
  log: string[],
): { delete: { namespace: string; name: string } } | { set: PodInfo } {
  const namespace = rng.pick(cast.namespaces);
  const name = rng.pick(cast.names);
  const key = `${namespace}/${name}`;
  if (rng.next() < 0.3) {
    log.push(`delete ${key}`);
    model.delete(key);
    return { delete: { namespace, name } };
  }
  const before = model.get(key);
  const ips = before && rng.next() < 0.5 ? [...before.ips] : Array.from({ length: rng.int(3) }, () => rng.pick(cast.ips));
  // hostNetwork is immutable in a pod's spec, but a pod deleted and made again may differ
  const hostNetwork = cast.hostNetwork ? (before && rng.next() < 0.9 ? before.hostNetwork : rng.next() < 0.2) : undefined;
  const p: PodInfo = { namespace, name, ips, ...(hostNetwork !== undefined && { hostNetwork }), finished: rng.next() < 0.1 };
  log.push(`set ${key} ${JSON.stringify(ips)}${hostNetwork ? ' hostNetwork' : ''}${p.finished ? ' finished' : ''}`);
  model.set(key, p);
  return { set: p };
}

/** The seed of this run: KUBE_DNS_FUZZ_SEED replays one; printed either way. */
export function fuzzSeed(t: { diagnostic(msg: string): void }) {
  const seed = process.env.KUBE_DNS_FUZZ_SEED ? Number(process.env.KUBE_DNS_FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
  t.diagnostic(`fuzz seed ${seed} (replay: KUBE_DNS_FUZZ_SEED=${seed})`);
  console.error(`fuzz seed ${seed} (replay: KUBE_DNS_FUZZ_SEED=${seed})`);
  return { seed, rng: prng(seed) };
}

export function realisticZone(): { zone: Zone; names: string[] } {
  const zone = new Zone();
  const names: string[] = [];
  for (let n = 0; n < 20; n++) {
    const ns = n === 0 ? 'default' : `team-${n}`;
    for (let i = 0; i < 25; i++) {
      const name = `svc-${i}`;
      const fq = `${name}.${ns}.svc.cluster.local`;
      if (i % 5 === 0) {
        zone.setService(headless(ns, name));
        const eps = Array.from({ length: 1 + (i % 40) }, (_, k) => ep(i % 2 ? `fd00::${n}:${i}:${k + 1}` : `10.${100 + n}.${i}.${k + 1}`, k % 3 ? `pod-${k}` : ''));
        zone.setSlice(slice(ns, `${name}-abc`, name, eps, [port('http', 80), port('grpc', 9090)]));
        names.push(fq, `pod-1.${fq}`, `_http._tcp.${fq}`);
      } else if (i === 7) {
        zone.setService(externalName(ns, name, i % 2 ? 'svc-1.default.svc.cluster.local' : 'example.com'));
        names.push(fq);
      } else if (i === 8) {
        zone.setService(externalName(ns, name, 'svc-8.default.svc.cluster.local')); // a loop in default
        names.push(fq);
      } else {
        const ips = i % 3 === 0 ? [`10.96.${n}.${i}`, `fd00:96::${n}:${i}`] : [`10.96.${n}.${i}`];
        zone.setService(clusterIP(ns, name, ips, [port('http', 80), port('', 8080), port('dns', 53, 'UDP')]));
        names.push(fq, `_dns._udp.${fq}`, `_http._tcp.${fq}`);
        names.push(`${i}.${n}.96.10.in-addr.arpa`);
      }
    }
    names.push(`${ns}.svc.cluster.local`, `10-1-2-3.${ns}.pod.cluster.local`, `fd00--1.${ns}.pod.cluster.local`);
  }
  names.push('cluster.local', 'dns-version.cluster.local', 'ns.dns.cluster.local', 'svc.cluster.local', 'nosuch.cluster.local');
  return { zone, names };
}
