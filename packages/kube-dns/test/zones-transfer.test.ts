// --transfer-to: AXFR of the cluster and external zones to a real BIND secondary (Debian bind9's
// named), NOTIFY on change, a serial that grows; REFUSED (and counted) for UDP, for an address not
// listed and for a zone that is not ours. dig (bind9-dnsutils) is the client, as an operator's.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService, endpointSlice, externalService, freePort, headlessService, startNamedSecondary, type FakeApiServer, type RunningNamed } from '@kube-dns/testkit';
import { editConfig, eventually, startCluster, waitSynced, type Cluster } from './integration-helpers.js';
import { parseOptions } from '../src/options.js';

const Z = 'cluster.local';
const E = 'example.com';

async function dig(port: number, ...args: string[]): Promise<string> {
  const r = await execa('dig', ['@127.0.0.1', '-p', String(port), '+time=2', '+tries=1', ...args], { reject: false });
  return r.stdout;
}

const seed = (api: FakeApiServer): void => {
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1'], [{ name: 'https', port: 443 }]));
  api.upsert('services', headlessService('db', 'pg', [{ name: 'pg', port: 5432 }]));
  api.upsert('endpointslices', endpointSlice('db', 'pg', 'pg-a', 'IPv4', [{ ip: '10.1.0.1', hostname: 'pg-0' }, { ip: '10.1.0.2' }], [{ name: 'pg', port: 5432 }]));
  api.upsert('services', externalService('shop', 'web', '10.10.0.1', { ingress: ['203.0.113.10'], ports: [{ name: 'https', port: 443 }] }));
};

let c: Cluster;
let named: RunningNamed;
before(async () => {
  const namedPort = await freePort();
  c = await startCluster({ args: [`--transfer-to=127.0.0.1:${namedPort}`, `--external-zone=${E}`], seed });
  await waitSynced(c);
  named = await startNamedSecondary([Z, E], c.dns.dnsPort, namedPort);
});
after(async () => {
  await named?.stop();
  await c?.stop();
});

test('dig AXFR over TCP from a listed address: SOA first and last, every record the resolver answers', async () => {
  const out = await dig(c.dns.dnsPort, Z, 'AXFR');
  const rrs = out.split('\n').filter((l) => l && !l.startsWith(';')).map((l) => l.split(/\s+/));
  assert.equal(rrs[0]?.[3], 'SOA', out);
  assert.equal(rrs.at(-1)?.[3], 'SOA', out);
  const text = rrs.map((r) => `${r[0]} ${r[3]} ${r.slice(4).join(' ')}`);
  for (const want of [
    `kubernetes.default.svc.${Z}. A 10.0.0.1`,
    `_https._tcp.kubernetes.default.svc.${Z}. SRV 10 100 443 kubernetes.default.svc.${Z}.`,
    `pg.db.svc.${Z}. A 10.1.0.1`,
    `pg-0.pg.db.svc.${Z}. A 10.1.0.1`,
    `10-1-0-2.pg.db.svc.${Z}. A 10.1.0.2`,
    `dns-version.${Z}. TXT "1.1.0"`,
  ]) {
    assert.ok(text.includes(want), `${want} in\n${text.join('\n')}`);
  }
  // a second transfer at the same serial is the same zone (built once, its ID set per request)
  const again = (await dig(c.dns.dnsPort, Z, 'AXFR')).split('\n').filter((l) => l && !l.startsWith(';'));
  assert.deepEqual(again, out.split('\n').filter((l) => l && !l.startsWith(';')));
  const ext = await dig(c.dns.dnsPort, E, 'AXFR');
  assert.match(ext, new RegExp(`web\\.shop\\.${E}\\.\\s+\\d+\\s+IN\\s+A\\s+203\\.0\\.113\\.10`));
});

test('a real BIND secondary transfers both zones, then follows a new Service via NOTIFY (bound: 15 s; ~1-3 s seen)', async (t) => {
  await eventually(async () => assert.match(await dig(named.port, `kubernetes.default.svc.${Z}`, 'A', '+short'), /^10\.0\.0\.1$/m), 15_000, 200).catch((e) => {
    throw new Error(`${String(e)}\nnamed log:\n${named.log()}`);
  });
  await eventually(async () => assert.match(await dig(named.port, `web.shop.${E}`, 'A', '+short'), /^203\.0\.113\.10$/m), 15_000, 200).catch((e) => {
    throw new Error(`${String(e)}\nnamed log:\n${named.log()}`);
  });
  const before = Number((await dig(named.port, Z, 'SOA', '+short')).split(/\s+/)[2]);
  const added = Date.now();
  c.api.upsert('services', clusterIPService('default', 'late-arrival', ['10.0.0.77']));
  const took = await eventually(async () => assert.match(await dig(named.port, `late-arrival.default.svc.${Z}`, 'A', '+short'), /^10\.0\.0\.77$/m), 15_000, 100).catch(
    (e) => {
      throw new Error(`${String(e)}\nnamed log:\n${named.log()}`);
    },
  );
  const after = Number((await dig(named.port, Z, 'SOA', '+short')).split(/\s+/)[2]);
  assert.ok(after > before, `serial grew: ${before} → ${after}`);
  // named refreshes on its own only every 300 s or more (its config): NOTIFY did this
  assert.match((await c.http('/metrics')).body, /kubedns_zone_notify\{state="acknowledged"\} [1-9]/);
  t.diagnostic(`new Service answered by the BIND secondary ${took} ms after it was added (${Date.now() - added} ms with the last dig)`);
});

test('the BIND secondary follows a live ignoreEmptyService change too (a new serial and NOTIFY)', async () => {
  c.api.upsert('services', clusterIPService('default', 'lonely', ['10.0.0.79'])); // no endpoints
  const named79 = async () => dig(named.port, `lonely.default.svc.${Z}`, 'A', '+short');
  await eventually(async () => assert.match(await named79(), /^10\.0\.0\.79$/m), 15_000, 200);
  await editConfig(c, 'ignoreEmptyService', 'true');
  await eventually(async () => assert.equal((await c.ask(`lonely.default.svc.${Z}`, 'A')).packet.rcode, 'NXDOMAIN'), 10_000, 100);
  await eventually(async () => assert.equal((await named79()).trim(), ''), 15_000, 200).catch((e) => {
    throw new Error(`${String(e)}\nnamed log:\n${named.log()}`);
  });
  // back to the flag's value, for the tests after this one
  await rm(join(c.configDir, 'ignoreEmptyService'));
  await eventually(async () => assert.equal((await c.ask(`lonely.default.svc.${Z}`, 'A')).packet.rcode, 'NOERROR'), 10_000, 100);
});

test('IXFR from a secondary at our serial is our SOA alone; from an older one the whole zone; over UDP the SOA alone', async () => {
  const serial = Number((await dig(c.dns.dnsPort, Z, 'SOA', '+short')).split(/\s+/)[2]);
  const records = (out: string) => out.split('\n').filter((l) => l && !l.startsWith(';')).map((l) => l.split(/\s+/)[3]);
  assert.deepEqual(records(await dig(c.dns.dnsPort, Z, `IXFR=${serial}`)), ['SOA'], 'up to date: nothing to send');
  const older = records(await dig(c.dns.dnsPort, Z, `IXFR=${serial - 1}`));
  assert.ok(older.length > 5 && older[0] === 'SOA' && older.at(-1) === 'SOA', older.join(' '));
  const udp = await dig(c.dns.dnsPort, Z, `IXFR=${serial - 1}`, '+notcp');
  assert.match(udp, /SERVER: .*\(UDP\)/);
  assert.deepEqual(records(udp), ['SOA'], 'over UDP: the SOA, so the secondary comes over TCP');
});

test('REFUSED and counted: AXFR over UDP, for a zone that is not ours', async () => {
  const udp = await c.ask(Z, 'AXFR' as never); // dig always takes TCP for AXFR: ask over UDP ourselves
  assert.equal(udp.packet.rcode, 'REFUSED');
  assert.match(await dig(c.dns.dnsPort, 'example.org', 'AXFR'), /Transfer failed/);
  const m = (await c.http('/metrics')).body;
  assert.match(m, /kubedns_zone_transfers_refused_total\{reason="zone"\} [1-9]/);
  assert.match(m, /kubedns_zone_transfers_refused_total\{reason="udp"\} [1-9]/);
  assert.match(m, /kubedns_zone_transfers_total\{zone="cluster.local"\} [1-9]/);
});

test('REFUSED from an address outside --transfer-to; and without --transfer-to at all', async () => {
  const others = await startCluster({ args: ['--transfer-to=10.0.0.0/8'], seed });
  const none = await startCluster({ seed });
  try {
    await Promise.all([waitSynced(others), waitSynced(none)]);
    assert.match(await dig(others.dns.dnsPort, Z, 'AXFR'), /Transfer failed/);
    assert.match((await others.http('/metrics')).body, /kubedns_zone_transfers_refused_total\{reason="address"\} 1/);
    assert.match(await dig(none.dns.dnsPort, Z, 'AXFR'), /Transfer failed/);
    // queries are unaffected
    assert.deepEqual(datas((await none.ask(`kubernetes.default.svc.${Z}`, 'A')).packet.answers), ['10.0.0.1']);
  } finally {
    await others.stop();
    await none.stop();
  }
});

test('a malformed --transfer-to entry stops the binary at start with one clear line', () => {
  assert.throws(() => parseOptions(['--transfer-to=10.0.0.0/33']), /--transfer-to=10.0.0.0\/33: "10.0.0.0\/33" is not a CIDR/);
  assert.throws(() => parseOptions(['--transfer-to=ns1.example.com']), /--transfer-to=ns1.example.com: "ns1.example.com" is not a CIDR or an IP\[:port\]/);
});

test("negative answers carry the zone's current serial, as its SOA query does, before and after a change", async () => {
  const serialOf = (r: Awaited<ReturnType<Cluster['ask']>>): number => {
    const soa = r.packet.authorities?.find((a) => a.type === 'SOA') ?? r.packet.answers?.find((a) => a.type === 'SOA');
    assert.ok(soa, `an SOA in ${JSON.stringify(r.packet)}`);
    return (soa.data as { serial: number }).serial;
  };
  // NXDOMAIN from the question's bytes, NXDOMAIN from the resolver, NODATA (the AAAA of an IPv4
  // Service, which the response cache keeps), and NXDOMAIN in the external zone
  const negatives = async (): Promise<number[]> => {
    const out: number[] = [];
    for (const [name, type, rcode] of [
      [`nosuch.default.svc.${Z}`, 'A', 'NXDOMAIN'],
      [`pg-9.pg.db.svc.${Z}`, 'A', 'NXDOMAIN'],
      [`kubernetes.default.svc.${Z}`, 'AAAA', 'NOERROR'],
      [`nosuch.shop.${E}`, 'A', 'NXDOMAIN'],
    ] as const) {
      const r = await c.ask(name, type);
      assert.equal(r.packet.rcode, rcode, `${name} ${type}`);
      out.push(serialOf(r));
    }
    return out;
  };
  const first = serialOf(await c.ask(Z, 'SOA'));
  assert.deepEqual(await negatives(), [first, first, first, first]);
  assert.deepEqual(await negatives(), [first, first, first, first], 'the second time (from the response cache where it keeps them)');
  c.api.upsert('services', clusterIPService('default', 'serial-mover', ['10.0.0.78']));
  await eventually(async () => assert.deepEqual(datas((await c.ask(`serial-mover.default.svc.${Z}`, 'A')).packet.answers), ['10.0.0.78']), 10_000, 50);
  // the serial moves at most once a second (transfer/serial.ts)
  let second = first;
  await eventually(async () => {
    second = serialOf(await c.ask(Z, 'SOA'));
    assert.ok(second > first, `serial grew: ${first} → ${second}`);
  }, 5000, 100);
  assert.deepEqual(await negatives(), [second, second, second, second]);
});
