// The original kube-dns unit tests (as in the kubernetes/dns tests), adapted to our corrected semantics:
// dashed labels instead of hash labels, PTRs for every counted headless address, SRV ports from
// the slice on bare headless names, EndpointSlices instead of Endpoints, no stale records after a
// slice is deleted, and only the service/namespace/endpoint-position `*` wildcards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ipToReverseName } from '../src/records/names.js';
import type { ServiceInfo } from '../src/records/types.js';
import type { Zone } from '../src/records/zone.js';
import { clusterIP, data, ep, externalName, headless, lines, port, q, slice, summary, zoneWith } from './resolve-fixtures.js';

const NAME = 'testservice.default.svc.cluster.local';
const EQUIVALENT = [NAME, 'testservice.*.svc.cluster.local', `*.${NAME}`, 'TestService.Default.svc.cluster.local'];
const IP_VARIANTS: string[][] = [
  ['1.2.3.4'],
  ['2001:db8::8a2e:370:7334'],
  ['1.2.3.4', '2001:db8::8a2e:370:7334'],
  ['2001:db8::8a2e:370:7334', '1.2.3.4'],
];

/** A and AAAA data together, sorted; 'NXDOMAIN' when the name does not exist. */
function hosts(z: Zone, name: string): string[] | 'NXDOMAIN' {
  const a = q(z, name, 'A');
  const aaaa = q(z, name, 'AAAA');
  assert.equal(a.rcode, aaaa.rcode, `${name}: A and AAAA agree on existence`);
  if (a.rcode === 'NXDOMAIN') return 'NXDOMAIN';
  return [...data(a, 'A'), ...data(aaaa, 'AAAA')].sort();
}

function ptr(z: Zone, ip: string): string[] | 'forward' {
  const r = q(z, ipToReverseName(ip), 'PTR');
  return r.action === 'forward' ? 'forward' : data(r, 'PTR');
}

function srvTargets(z: Zone, name: string): string[] | 'NXDOMAIN' {
  const r = q(z, name, 'SRV');
  return r.rcode === 'NXDOMAIN' ? 'NXDOMAIN' : data(r, 'SRV');
}

test('#1 pod name → its IP', () => {
  assert.equal(summary(q(zoneWith(), '1-2-3-4.default.pod.cluster.local', 'A')), 'NOERROR | A 1.2.3.4');
});

test('#2 unnamed single-port service, 4 IP variants: addresses, PTRs, delete', () => {
  for (const ips of IP_VARIANTS) {
    const z = zoneWith(clusterIP('default', 'testservice', ips, [port('', 80)]));
    for (const name of EQUIVALENT) assert.deepEqual(hosts(z, name), [...ips].sort(), `${ips} ${name}`);
    for (const ip of ips) assert.deepEqual(ptr(z, ip), [`${NAME}.`], `${ips} PTR ${ip}`);
    // an unnamed port has no _port._proto name, but is listed on the bare name
    assert.equal(srvTargets(z, `_._tcp.${NAME}`), 'NXDOMAIN');
    assert.deepEqual(srvTargets(z, NAME), [`10 100 80 ${NAME}.`]);
    z.deleteService('default', 'testservice');
    for (const name of EQUIVALENT) assert.equal(hosts(z, name), 'NXDOMAIN', `${ips} deleted ${name}`);
    for (const ip of ips) assert.equal(ptr(z, ip), 'forward', `${ips} deleted PTR ${ip}`);
  }
});

test('#3 named single-port service, 4 IP variants: SRV follows a port rename, delete', () => {
  for (const ips of IP_VARIANTS) {
    const svc = (portName: string): ServiceInfo => clusterIP('default', 'testservice', ips, [port(portName, 80)]);
    const z = zoneWith(svc('http1'));
    for (const name of EQUIVALENT) assert.deepEqual(hosts(z, name), [...ips].sort());
    // one SRV whatever the number of families (identical records are one record)
    assert.deepEqual(srvTargets(z, `_http1._tcp.${NAME}`), [`10 100 80 ${NAME}.`]);
    const additional = lines(q(z, `_http1._tcp.${NAME}`, 'SRV').additionals).map((l) => l.split(' ').pop());
    assert.deepEqual(additional.sort(), [...ips].sort());
    z.setService(svc('http2'));
    assert.deepEqual(srvTargets(z, `_http2._tcp.${NAME}`), [`10 100 80 ${NAME}.`]);
    assert.equal(srvTargets(z, `_http1._tcp.${NAME}`), 'NXDOMAIN');
    z.deleteService('default', 'testservice');
    assert.equal(hosts(z, NAME), 'NXDOMAIN');
    assert.equal(srvTargets(z, `_http1._tcp.${NAME}`), 'NXDOMAIN');
    assert.equal(srvTargets(z, `_http2._tcp.${NAME}`), 'NXDOMAIN');
  }
});

test('#4 headless SRV on the bare name: dashed-label targets, A in additional', () => {
  const z = zoneWith(headless('default', 'testservice'));
  z.setSlice(slice('default', 'ts-1', 'testservice', [ep('10.0.0.1'), ep('10.0.0.2')], [port('', 80)]));
  assert.deepEqual(srvTargets(z, NAME), [`10 50 80 10-0-0-1.${NAME}.`, `10 50 80 10-0-0-2.${NAME}.`]);
  assert.deepEqual(lines(q(z, NAME, 'SRV').additionals).sort(), [
    `10-0-0-1.${NAME} 30 IN A 10.0.0.1`,
    `10-0-0-2.${NAME} 30 IN A 10.0.0.2`,
  ]);
});

test('#5 headless SRV with endpoint hostnames', () => {
  const z = zoneWith(headless('default', 'testservice'));
  z.setSlice(slice('default', 'ts-1', 'testservice', [ep('10.0.0.1', 'ep-0'), ep('10.0.0.2', 'ep-1')], [port('', 80)]));
  assert.deepEqual(srvTargets(z, NAME), [`10 50 80 ep-0.${NAME}.`, `10 50 80 ep-1.${NAME}.`]);
});

test('#6 headless named-port SRV', () => {
  const z = zoneWith(headless('default', 'testservice'));
  z.setSlice(slice('default', 'ts-1', 'testservice', [ep('10.0.0.1')], [port('http', 8081)]));
  const r = q(z, `_http._tcp.${NAME}`, 'SRV');
  assert.deepEqual(data(r, 'SRV'), [`10 100 8081 10-0-0-1.${NAME}.`]);
  assert.deepEqual(lines(r.additionals), [`10-0-0-1.${NAME} 30 IN A 10.0.0.1`]);
});

test('#7 ExternalName → CNAME; gone after delete', () => {
  const z = zoneWith(externalName('default', 'testservice', 'foo.bar.example.com'));
  assert.deepEqual(data(q(z, NAME, 'CNAME'), 'CNAME'), ['foo.bar.example.com.']);
  assert.equal(q(z, NAME, 'A').chase, 'foo.bar.example.com');
  z.deleteService('default', 'testservice');
  assert.equal(q(z, NAME, 'CNAME').rcode, 'NXDOMAIN');
});

test('#8 headless over two slices: every address, a PTR each; delete removes all', () => {
  const z = zoneWith(headless('default', 'testservice'));
  z.setSlice(slice('default', 'ts-1', 'testservice', [ep('10.0.0.1'), ep('10.0.0.2')], [port('', 80)]));
  z.setSlice(slice('default', 'ts-2', 'testservice', [ep('10.0.0.3'), ep('10.0.0.4')], [port('', 8080)]));
  assert.deepEqual(hosts(z, NAME), ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']);
  assert.deepEqual(ptr(z, '10.0.0.3'), [`10-0-0-3.${NAME}.`]);
  z.deleteService('default', 'testservice');
  assert.equal(hosts(z, NAME), 'NXDOMAIN');
  for (const ip of ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']) assert.equal(ptr(z, ip), 'forward');
});

test('#9 headless with named ports per slice; shrinking to one slice', () => {
  const z = zoneWith(headless('default', 'testservice'));
  z.setSlice(slice('default', 'ts-1', 'testservice', [ep('10.0.0.1'), ep('10.0.0.2')], [port('http1', 80), port('http2', 81)]));
  z.setSlice(slice('default', 'ts-2', 'testservice', [ep('10.0.0.3'), ep('10.0.0.4')], [port('https', 443)]));
  assert.equal((hosts(z, NAME) as string[]).length, 4);
  const check = (portName: string, num: number, ips: string[]): void => {
    const r = q(z, `_${portName}._tcp.${NAME}`, 'SRV');
    assert.equal(r.answers.length, ips.length, portName);
    const resolved: string[] = [];
    for (const a of r.answers) {
      assert.ok(a.type === 'SRV' && a.data.port === num && a.data.weight === 50, portName);
      const target = hosts(z, (a as { data: { target: string } }).data.target);
      assert.equal((target as string[]).length, 1, `${portName}: each target is one address`);
      resolved.push(...(target as string[]));
    }
    assert.deepEqual(resolved.sort(), ips);
  };
  check('http1', 80, ['10.0.0.1', '10.0.0.2']);
  check('http2', 81, ['10.0.0.1', '10.0.0.2']);
  check('https', 443, ['10.0.0.3', '10.0.0.4']);
  z.deleteSlice('default', 'ts-2');
  assert.deepEqual(hosts(z, NAME), ['10.0.0.1', '10.0.0.2']);
  check('http1', 80, ['10.0.0.1', '10.0.0.2']);
  check('http2', 81, ['10.0.0.1', '10.0.0.2']);
  assert.equal(srvTargets(z, `_https._tcp.${NAME}`), 'NXDOMAIN');
  z.deleteService('default', 'testservice');
  assert.equal(hosts(z, NAME), 'NXDOMAIN');
  assert.equal(srvTargets(z, `_http1._tcp.${NAME}`), 'NXDOMAIN');
});

test('#10 headless endpoints grow, empty out, and the service goes', () => {
  const z = zoneWith(headless('default', 'testservice'));
  z.setSlice(slice('default', 'ts-1', 'testservice', [ep('10.0.0.1'), ep('10.0.0.2')], [port('', 80)]));
  assert.deepEqual(hosts(z, NAME), ['10.0.0.1', '10.0.0.2']);
  z.setSlice(slice('default', 'ts-2', 'testservice', [ep('10.0.0.3'), ep('10.0.0.4')], [port('', 8080)]));
  assert.deepEqual(hosts(z, NAME), ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4']);
  z.setSlice(slice('default', 'ts-1', 'testservice', [], [port('', 80)]));
  z.setSlice(slice('default', 'ts-2', 'testservice', [], [port('', 8080)]));
  assert.equal(hosts(z, NAME), 'NXDOMAIN');
  z.deleteService('default', 'testservice');
  assert.equal(hosts(z, NAME), 'NXDOMAIN');
});

test('#11-#12 named headless endpoint: A and PTR follow an address change', () => {
  const z = zoneWith(headless('default', 'testservice'));
  z.setSlice(slice('default', 'ts-1', 'testservice', [ep('10.0.0.1', 'foo')]));
  assert.deepEqual(hosts(z, NAME), ['10.0.0.1']);
  assert.deepEqual(hosts(z, `foo.${NAME}`), ['10.0.0.1']);
  assert.deepEqual(ptr(z, '10.0.0.1'), [`foo.${NAME}.`]);
  z.setSlice(slice('default', 'ts-1', 'testservice', [ep('10.0.0.2', 'foo')]));
  assert.deepEqual(hosts(z, NAME), ['10.0.0.2']);
  assert.equal(ptr(z, '10.0.0.1'), 'forward');
  assert.deepEqual(ptr(z, '10.0.0.2'), [`foo.${NAME}.`]);
});

test('#13 deleting the last slice removes the records too (the original kept stale A records)', () => {
  const z = zoneWith(headless('default', 'testservice'));
  z.setSlice(slice('default', 'ts-1', 'testservice', [ep('10.0.0.1', 'foo')]));
  z.deleteSlice('default', 'ts-1');
  assert.equal(hosts(z, NAME), 'NXDOMAIN');
  assert.equal(ptr(z, '10.0.0.1'), 'forward');
});

test('#14 headless service before its endpoints, and slices before their service', () => {
  const z = zoneWith(headless('default', 'testservice'));
  assert.equal(hosts(z, NAME), 'NXDOMAIN');
  z.setSlice(slice('default', 'ts-1', 'testservice', [ep('10.0.0.1'), ep('10.0.0.2')], [port('', 80)]));
  assert.deepEqual(hosts(z, NAME), ['10.0.0.1', '10.0.0.2']);
  z.deleteService('default', 'testservice');
  assert.equal(hosts(z, NAME), 'NXDOMAIN');
  assert.equal(ptr(z, '10.0.0.1'), 'forward');
  // the slices are kept: the service coming back finds them
  z.setService(headless('default', 'testservice'));
  assert.deepEqual(hosts(z, NAME), ['10.0.0.1', '10.0.0.2']);
  assert.deepEqual(ptr(z, '10.0.0.1'), [`10-0-0-1.${NAME}.`]);
});

test('spec 2.4.1: several endpoints sharing a hostname all answer (the original kept the last)', () => {
  const z = zoneWith(headless('default', 'testservice'));
  z.setSlice(slice('default', 'ts-1', 'testservice', [ep('10.2.0.1', 'a'), ep('10.2.0.2', 'a')]));
  assert.deepEqual(hosts(z, `a.${NAME}`), ['10.2.0.1', '10.2.0.2']);
  assert.deepEqual(ptr(z, '10.2.0.1'), [`a.${NAME}.`]);
  assert.deepEqual(ptr(z, '10.2.0.2'), [`a.${NAME}.`]);
});
