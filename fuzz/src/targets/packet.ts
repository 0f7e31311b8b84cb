// The packet entry point: DnsHandler.handle(bytes) over a realistic zone (ClusterIP, dual-stack,
// headless with hostnames, ExternalName in and out of the cluster, pods), as both listeners call it.
import * as dnsPacket from 'dns-packet';
import { silentLogger } from '@kube-dns/config';
import { buildQuery } from '@kube-dns/dns-client';
// the fixtures alone: the testkit's index would load client-node, and coverage is taken over every loaded script
import { clusterIPService, endpointSlice, externalNameService, headlessService, pod } from '../../../packages/testkit/dist/src/fixtures.js';
import { DnsHandler } from '../../../packages/kube-dns/dist/src/server/handler.js';
import { MAX_UDP_SIZE } from '../../../packages/kube-dns/dist/src/server/encode.js';
import { Zone } from '../../../packages/kube-dns/dist/src/records/zone.js';
import { podFromKube, serviceFromKube, sliceFromKube } from '../../../packages/kube-dns/dist/src/records/from-kube.js';
import { resolve } from '../../../packages/kube-dns/dist/src/resolve/resolve.js';
import { check, type FuzzTarget } from '../target.js';

function realisticZone(): Zone {
  const zone = new Zone();
  const svc = (o: Parameters<typeof serviceFromKube>[0]) => zone.setService(serviceFromKube(o)!);
  svc(clusterIPService('default', 'kubernetes', ['10.0.0.1'], [{ name: 'https', port: 443 }]));
  svc(clusterIPService('default', 'dual', ['10.0.0.20', 'fd00::20'], [{ name: 'dns', port: 53, protocol: 'UDP' }, { port: 8080 }]));
  svc(headlessService('db', 'pg', [{ name: 'pg', port: 5432 }]));
  zone.setSlice(sliceFromKube(endpointSlice('db', 'pg', 'pg-a', 'IPv4', [{ ip: '10.1.0.1', hostname: 'pg-0' }, { ip: '10.1.0.2' }, { ip: '10.1.0.9', ready: false }], [{ name: 'pg', port: 5432 }]))!);
  zone.setSlice(sliceFromKube(endpointSlice('db', 'pg', 'pg-v6', 'IPv6', [{ ip: 'fd00::1:1', hostname: 'pg-0' }], [{ name: 'pg', port: 5432 }]))!);
  svc(externalNameService('default', 'inside', 'kubernetes.default.svc.cluster.local'));
  svc(externalNameService('default', 'outside', 'www.example.org'));
  svc(clusterIPService('big', 'many', ['10.9.0.1'], Array.from({ length: 40 }, (_, i) => ({ name: `p${i}`, port: 1000 + i }))));
  zone.setPod(podFromKube(pod('default', 'web-0', ['10.2.0.5', 'fd00::2:5']))!);
  return zone;
}

const SEED_QUESTIONS: [string, dnsPacket.RecordType][] = [
  ['kubernetes.default.svc.cluster.local', 'A'],
  ['dual.default.svc.cluster.local', 'AAAA'],
  ['_dns._udp.dual.default.svc.cluster.local', 'SRV'],
  ['pg.db.svc.cluster.local', 'A'],
  ['pg-0.pg.db.svc.cluster.local', 'AAAA'],
  ['_pg._tcp.pg.db.svc.cluster.local', 'SRV'],
  ['inside.default.svc.cluster.local', 'A'],
  ['outside.default.svc.cluster.local', 'A'],
  ['many.big.svc.cluster.local', 'SRV'],
  ['10-2-0-5.default.pod.cluster.local', 'A'],
  ['1.0.0.10.in-addr.arpa', 'PTR'],
  ['cluster.local', 'SOA'],
  ['nope.default.svc.cluster.local', 'A'],
  ['www.example.org', 'A'],
  ['dns-version.cluster.local', 'TXT'],
];

/** A decoded reply with each section's records sorted: equal when only the order differs. */
function canonical(p: dnsPacket.DecodedPacket): string {
  const sorted = (rrs: unknown[] | undefined) => (rrs ?? []).map((r) => JSON.stringify(r)).sort();
  return JSON.stringify([p.id, p.flags, p.questions, sorted(p.answers), sorted(p.authorities), sorted(p.additionals)]);
}

export function packetTarget(): FuzzTarget {
  const zone = realisticZone();
  const opts = { zone: 'cluster.local', ttl: 30, pods: 'insecure' as const, serial: 1 };
  const handler = new DnsHandler({
    zone,
    resolve: (name, qtype) => resolve(zone, name, qtype, opts),
    // no network here: every forward fails at once, as with every upstream down (SERVFAIL)
    forwarder: { forward: () => Promise.resolve(undefined) },
    isSynced: () => true,
    log: silentLogger(),
    cacheEntries: 1000,
    malformedRepliesPerSecond: Infinity, // every malformed input exercises the error reply
  });
  const answer = async (input: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer | undefined> => {
    let r;
    try {
      r = await handler.handle(input, transport);
    } catch (e) {
      check(false, `handle() threw: ${(e as Error).stack ?? String(e)}`);
    }
    return r;
  };
  return {
    name: 'packet',
    covers: (url) => url.includes('/packages/kube-dns/dist/src/') || url.includes('/dns-packet/'),
    seeds: () =>
      SEED_QUESTIONS.flatMap(([name, type], i) => [
        buildQuery({ name, type, id: i }),
        buildQuery({ name, type, id: 100 + i, ednsUdpSize: 1232, dnssecOk: i % 2 === 0 }),
      ]),
    dictionary: [
      [0xc0, 0x0c], [0xc0, 0x00], [0x00, 0x00, 0x29, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
      [0x07, ...Buffer.from('cluster'), 0x05, ...Buffer.from('local'), 0x00], [0x03, ...Buffer.from('svc')], [0x03, ...Buffer.from('pod')],
      [0x00, 0x01], [0x00, 0x1c], [0x00, 0x21], [0x00, 0x0c], [0x00, 0xff], [0x00, 0xfc], [0x00, 0x06], [0x00, 0x10], [0x3f], [0x40],
      [0x01, 0x2a], [0x00, 0x03],
    ].map((b) => Buffer.from(b)),
    async run(input) {
      const transport = input.length % 2 ? 'tcp' : 'udp';
      const reply = await answer(input, transport);
      if (reply === undefined) return;
      check(Buffer.isBuffer(reply), 'reply is not a Buffer');
      check(reply.length >= 12, `reply of ${reply.length} bytes is shorter than a header`);
      check(reply.length <= (transport === 'udp' ? MAX_UDP_SIZE : 65535), `${transport} reply of ${reply.length} bytes is too large`);
      check(input.length < 2 || reply.readUInt16BE(0) === input.readUInt16BE(0), 'reply ID differs from the query ID');
      check((reply[2]! & 0x80) !== 0, 'reply without the QR bit');
      let decoded: dnsPacket.DecodedPacket;
      try {
        decoded = dnsPacket.decode(reply);
      } catch (e) {
        check(false, `our reply does not decode: ${(e as Error).message} (${reply.toString('hex')})`);
      }
      // the same query again is served from the response cache: the same answer, up to the order
      // of records within a section (address records are rotated between replies on purpose)
      const again = await answer(input, transport);
      check(again !== undefined, 'asked twice, answered only once');
      check(canonical(dnsPacket.decode(again)) === canonical(decoded), `asked twice, answered differently:\n  ${reply.toString('hex')}\n  ${again.toString('hex')}`);
    },
  };
}
