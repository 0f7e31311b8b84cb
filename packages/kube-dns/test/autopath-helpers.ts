// Helpers of the autopath tests: asking from a chosen loopback address (a pod's IP as dnsmasq
// sees it), queries with hand-made client-subnet options, and the autopath counters.
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import * as dnsPacket from 'dns-packet';
import type { V1Pod } from '@kubernetes/client-node';
import { pod, type FakeApiServer } from '@kube-dns/testkit';
import { startPod } from './pod-through-dnsmasq.js';

export type Reply = dnsPacket.DecodedPacket & { rcode: string };

/** One UDP question to host:port sent from `source` (any 127.x address works on Linux's lo). */
export function askFrom(source: string, server: { host: string; port: number }, query: Buffer, timeoutMs = 3000): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    const timer = setTimeout(() => {
      s.close();
      reject(new Error(`no reply from ${server.host}:${server.port} within ${timeoutMs} ms`));
    }, timeoutMs);
    s.once('error', (e) => {
      clearTimeout(timer);
      s.close();
      reject(e);
    });
    s.once('message', (msg) => {
      clearTimeout(timer);
      s.close();
      resolve(dnsPacket.decode(msg) as Reply);
    });
    s.bind(0, source, () => s.send(query, server.port, server.host));
  });
}

export function question(name: string, type: dnsPacket.RecordType = 'A', options?: object[]): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id: Math.floor(Math.random() * 65536),
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type, class: 'IN' }],
    ...(options && { additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0, options } as dnsPacket.Answer] }),
  });
}

/** The option dnsmasq --add-subnet=32,128 adds for a client at `ip`. */
export function subnetOf(ip: string, prefix = 32): object {
  return { code: 'CLIENT_SUBNET', family: ip.includes(':') ? 2 : 1, sourcePrefixLength: prefix, scopePrefixLength: 0, ip };
}

export function hostNetworkPod(namespace: string, name: string, ip: string): V1Pod {
  const p = pod(namespace, name, [ip]);
  return { ...p, spec: { ...p.spec!, hostNetwork: true } };
}

/** kubedns_autopath_total by result, from a /metrics text. */
export function autopathCounts(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(/^kubedns_autopath_total\{result="([a-z_]+)"\} (\d+)/gm)) out[m[1]!] = Number(m[2]);
  return out;
}

/** Answers as [type, name, data] triples, easy to compare. */
export function records(r: Reply): [string, string, string][] {
  return (r.answers ?? []).map((a) => [a.type, a.name, String((a as { data?: unknown }).data)]);
}

/**
 * The manifest's commented-out optional argument starting with `flag` (`# - --autopath`), so
 * the tests run exactly what an operator uncomments.
 */
export function manifestOptionalArg(flag: string): string {
  const text = readFileSync(new URL('../../../../manifests/kube-dns.yaml', import.meta.url), 'utf8');
  const m = new RegExp(`^\\s*#\\s*- (${flag.replace(/[-]/g, '\\-')}(=\\S+)?)\\s*$`, 'm').exec(text);
  if (!m) throw new Error(`manifests/kube-dns.yaml offers no commented-out "# - ${flag}" line`);
  return m[1]!;
}

/**
 * The pod through its real dnsmasq with the manifest's autopath lines uncommented, an upstream
 * that knows example.test (an A record, no AAAA), and the cluster `seed` gives.
 */
export function startAutopathPod(seed: (api: FakeApiServer) => void): ReturnType<typeof startPod> {
  return startPod({
    upstreamHandler: (q) =>
      q.name !== 'example.test' ? { rcode: 'NXDOMAIN' } : q.type === 'A' ? { answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.10' }] } : {},
    extraKubednsArgs: [manifestOptionalArg('--autopath')],
    extraDnsmasqArgs: [manifestOptionalArg('--add-subnet'), manifestOptionalArg('--strip-subnet')],
    seed,
  });
}
