// Round-robin on encoded replies (src/server/rotate.ts): every rotation keeps the message
// decodable and its record set identical, moves the first record, and re-aims compression
// pointers into moved records; what it cannot rotate safely it leaves byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as dnsPacket from 'dns-packet';
import { buildQuery, rrText } from '@kube-dns/dns-client';
import { TURNS, resetRotation, rotateAnswers, turnKey } from '../src/server/rotate.js';
import { parseQuery } from '../src/server/wire.js';
import { ep, headless, slice } from './resolve-fixtures.js';
import { startStack } from './server-stack.js';

const HDR = (an: number, ns: number, ar: number) => {
  const b = Buffer.alloc(12);
  b.writeUInt16BE(0x1234, 0);
  b.writeUInt16BE(0x8500, 2);
  b.writeUInt16BE(1, 4);
  b.writeUInt16BE(an, 6);
  b.writeUInt16BE(ns, 8);
  b.writeUInt16BE(ar, 10);
  return b;
};

function name(n: string): Buffer {
  const parts = n.split('.').filter(Boolean);
  return Buffer.concat([...parts.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])), Buffer.from([0])]);
}

const ptr = (off: number) => Buffer.from([0xc0 | (off >> 8), off & 0xff]);

function rr(owner: Buffer, type: number, rdata: Buffer, ttl = 30): Buffer {
  const fixed = Buffer.alloc(10);
  fixed.writeUInt16BE(type, 0);
  fixed.writeUInt16BE(1, 2);
  fixed.writeUInt32BE(ttl, 4);
  fixed.writeUInt16BE(rdata.length, 8);
  return Buffer.concat([owner, fixed, rdata]);
}

const a = (ip: string) => Buffer.from(ip.split('.').map(Number));
function srvData(port: number, target: Buffer): Buffer {
  const b = Buffer.alloc(6);
  b.writeUInt16BE(0, 0);
  b.writeUInt16BE(10, 2);
  b.writeUInt16BE(port, 4);
  return Buffer.concat([b, target]);
}

function question(n: string, type: number): Buffer {
  const t = Buffer.alloc(4);
  t.writeUInt16BE(type, 0);
  t.writeUInt16BE(1, 2);
  return Buffer.concat([name(n), t]);
}

const decode = (b: Buffer) => dnsPacket.decode(b);
/** An answer's data, whatever its type. */
const D = (x: dnsPacket.Answer | undefined): any => (x as { data?: unknown } | undefined)?.data;
const texts = (list: dnsPacket.Answer[] | undefined) => (list ?? []).map(rrText);
const sorted = (x: string[]) => [...x].sort();

/** A headless service's A reply as our encoder writes it: owners point at the question. */
function headlessA(ips: string[]): Buffer {
  return Buffer.concat([HDR(ips.length, 0, 0), question('db.shop.svc.cluster.local', 1), ...ips.map((ip) => rr(ptr(12), 1, a(ip)))]);
}

test('A records of one name rotate one step per reply; the set and the header stay the same', () => {
  resetRotation(0);
  const ips = ['10.4.0.1', '10.4.0.2', '10.4.0.3'];
  const original = headlessA(ips);
  const firsts: string[] = [];
  for (let i = 0; i < 6; i++) {
    const out = rotateAnswers(Buffer.from(original));
    assert.equal(out.length, original.length);
    assert.deepEqual(out.subarray(0, 12), original.subarray(0, 12), 'header untouched');
    const p = decode(out);
    assert.deepEqual(sorted(texts(p.answers)), sorted(texts(decode(original).answers)));
    assert.ok(p.answers!.every((x) => x.name === 'db.shop.svc.cluster.local'));
    firsts.push((p.answers![0] as { data: string }).data);
  }
  assert.deepEqual(firsts, ['10.4.0.1', '10.4.0.2', '10.4.0.3', '10.4.0.1', '10.4.0.2', '10.4.0.3']);
  // the rotation is a rotation, not a shuffle: the cyclic order is kept
  resetRotation(1);
  assert.deepEqual(decode(rotateAnswers(Buffer.from(original))).answers!.map((x) => (x as { data: string }).data), ['10.4.0.2', '10.4.0.3', '10.4.0.1']);
});

test('SRV answers of different lengths rotate, and additional records pointing into them are re-aimed', () => {
  // SRV targets in full; the additional A records' owners are pointers to those targets, as a
  // compressing encoder writes them. After the rotation each target must still own its address.
  const q = question('_pg._tcp.db.shop.svc.cluster.local', 33);
  const hosts = ['db-0', 'replica-long-name-1', 'x'];
  const head = HDR(3, 0, 3);
  let off = 12 + q.length;
  const answers: Buffer[] = [];
  const targetAt: number[] = [];
  for (const [i, h] of hosts.entries()) {
    const owner = ptr(12);
    targetAt.push(off + owner.length + 10 + 6);
    const r = rr(owner, 33, srvData(5432 + i, name(`${h}.db.shop.svc.cluster.local`)));
    answers.push(r);
    off += r.length;
  }
  const additionals = hosts.map((_, i) => rr(ptr(targetAt[i]!), 1, a(`10.4.0.${i + 1}`)));
  const original = Buffer.concat([head, q, ...answers, ...additionals]);
  const pairs = (b: Buffer) => {
    const p = decode(b);
    const port = new Map(p.answers!.map((x) => [D(x).target, D(x).port]));
    return sorted(p.additionals!.map((x) => `${x.name} ${(x as { data: string }).data} ${port.get(x.name)}`));
  };
  const want = pairs(original);
  assert.deepEqual(want, ['db-0.db.shop.svc.cluster.local 10.4.0.1 5432', 'replica-long-name-1.db.shop.svc.cluster.local 10.4.0.2 5433', 'x.db.shop.svc.cluster.local 10.4.0.3 5434']);
  const firsts = new Set<string>();
  for (let turn = 0; turn < 3; turn++) {
    resetRotation(turn);
    const out = rotateAnswers(Buffer.from(original));
    assert.deepEqual(pairs(out), want, `turn ${turn}: each address still belongs to its SRV target`);
    assert.deepEqual(sorted(texts(decode(out).answers)), sorted(texts(decode(original).answers)));
    firsts.add(D(decode(out).answers![0]).target);
  }
  assert.equal(firsts.size, 3, 'each SRV record came first once');
});

test('a CNAME before the addresses stays first; only the run of addresses rotates', () => {
  const q = question('alias.shop.svc.cluster.local', 1);
  const cnameRR = rr(ptr(12), 5, name('db.shop.svc.cluster.local'));
  const targetOff = 12 + q.length + 2 + 10;
  const original = Buffer.concat([HDR(3, 0, 0), q, cnameRR, rr(ptr(targetOff), 1, a('10.0.0.1')), rr(ptr(targetOff), 1, a('10.0.0.2'))]);
  resetRotation(1);
  const p = decode(rotateAnswers(Buffer.from(original)));
  assert.deepEqual(p.answers!.map((x) => `${x.type} ${x.name} ${String(D(x))}`), [
    'CNAME alias.shop.svc.cluster.local db.shop.svc.cluster.local',
    'A db.shop.svc.cluster.local 10.0.0.2',
    'A db.shop.svc.cluster.local 10.0.0.1',
  ]);
});

test('left byte for byte: one answer, mixed owners, a pointer inside the run into the run, garbage', () => {
  resetRotation(1);
  const one = headlessA(['10.0.0.1']);
  assert.deepEqual(rotateAnswers(Buffer.from(one)), one);

  const q = question('x.cluster.local', 1);
  const mixed = Buffer.concat([HDR(2, 0, 0), q, rr(ptr(12), 1, a('10.0.0.1')), rr(name('y.cluster.local'), 1, a('10.0.0.2'))]);
  assert.deepEqual(rotateAnswers(Buffer.from(mixed)), mixed, 'different owners are not one run');

  // second SRV target compressed against the first one's: rotating would make a forward pointer
  const sq = question('_p._tcp.s.ns.svc.cluster.local', 33);
  const first = rr(ptr(12), 33, srvData(1, name('a.s.ns.svc.cluster.local')));
  const firstTarget = 12 + sq.length + 2 + 10 + 6;
  const second = rr(ptr(12), 33, srvData(2, Buffer.concat([Buffer.from([1, 0x62]), ptr(firstTarget + 2)])));
  const inner = Buffer.concat([HDR(2, 0, 0), sq, first, second]);
  assert.deepEqual(decode(inner).answers!.map((x) => D(x).target), ['a.s.ns.svc.cluster.local', 'b.s.ns.svc.cluster.local']);
  assert.deepEqual(rotateAnswers(Buffer.from(inner)), inner);

  const cut = headlessA(['10.0.0.1', '10.0.0.2', '10.0.0.3']).subarray(0, 60);
  assert.deepEqual(rotateAnswers(Buffer.from(cut)), cut, 'a message claiming more records than it holds');
  for (let i = 0; i < 2000; i++) {
    const junk = randomBytes(12 + (i % 200));
    junk.writeUInt16BE(2 + (i % 5), 6);
    const copy = Buffer.from(junk);
    assert.doesNotThrow(() => rotateAnswers(copy));
    assert.equal(copy.length, junk.length);
  }
});

test('a reply with an OPT record: the answers rotate, the OPT record stays last', () => {
  resetRotation(2);
  const q = question('db.shop.svc.cluster.local', 1);
  const opt = Buffer.from([0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0]);
  const withOpt = Buffer.concat([HDR(3, 0, 1), q, ...['10.0.0.1', '10.0.0.2', '10.0.0.3'].map((ip) => rr(ptr(12), 1, a(ip))), opt]);
  const out = rotateAnswers(Buffer.from(withOpt));
  assert.deepEqual(out.subarray(out.length - opt.length), opt, 'the OPT record stays last');
  assert.equal((decode(out).answers![0] as { data: string }).data, '10.0.0.3');
});

test('each name turns on its own: a client looking up two 2-pod services in turn gets each pod of each first half the time', async (t) => {
  // with one turn counter for every reply, each name saw every other turn: the same first pod
  // of each, every time, for a client alternating between two services
  const s = await startStack();
  t.after(s.stop);
  const ask = (n: string, id = 0) => buildQuery({ name: `${n}.default.svc.cluster.local`, type: 'A', id });
  // two names in different slots of the counters' table (the hash is seeded per process; names
  // sharing a slot share a counter, as every name did before)
  const slotOf = (n: string) => turnKey(parseQuery(ask(n)) as { keyHash: number; qtype: number }) & (TURNS - 1);
  const other = ['b', 'c', 'd', 'e'].find((n) => slotOf(n) !== slotOf('a'))!;
  const names = ['a', other];
  for (const [i, n] of names.entries()) {
    s.zone.setService(headless('default', n));
    s.zone.setSlice(slice('default', `${n}-1`, n, [ep(`10.${i + 1}.0.1`), ep(`10.${i + 1}.0.2`)]));
  }
  const firsts = names.map(() => new Map<string, number>());
  for (let i = 0; i < 20; i++) {
    for (const [k, n] of names.entries()) {
      const reply = await s.handler.handle(ask(n, i), 'udp');
      const first = String(D(decode(reply as Buffer).answers![0]));
      firsts[k]!.set(first, (firsts[k]!.get(first) ?? 0) + 1);
    }
  }
  assert.deepEqual([...firsts[0]!.entries()].sort(), [['10.1.0.1', 10], ['10.1.0.2', 10]]);
  assert.deepEqual([...firsts[1]!.entries()].sort(), [['10.2.0.1', 10], ['10.2.0.2', 10]]);
});

test('A and AAAA of a dual-stack service turn apart: a resolver asking both each lookup still spreads over the pods', async (t) => {
  // with one counter per name, A then AAAA moved it by two: the A answer of 2 pods never turned
  const s = await startStack();
  t.after(s.stop);
  const fqdn = (n: string) => `${n}.default.svc.cluster.local`;
  const ask = (n: string, type: 'A' | 'AAAA', id = 0) => buildQuery({ name: fqdn(n), type, id });
  const slot = (n: string, type: 'A' | 'AAAA') => turnKey(parseQuery(ask(n, type)) as { keyHash: number; qtype: number }) & (TURNS - 1);
  // the hash is seeded per process: a name whose A and AAAA fall in one slot (1 in 4,096) would
  // share a counter, so the first of four whose do not (none: A and AAAA share a counter always)
  const name = ['db', 'db2', 'db3', 'db4'].find((n) => slot(n, 'A') !== slot(n, 'AAAA'));
  assert.ok(name, 'A and AAAA of a name have counters of their own');
  s.zone.setService(headless('default', name));
  s.zone.setSlice(slice('default', 'db-v4', name, [ep('10.1.0.1'), ep('10.1.0.2')]));
  s.zone.setSlice(slice('default', 'db-v6', name, [ep('fd00::1'), ep('fd00::2')]));
  const firstA = new Map<string, number>();
  const firstAAAA = new Map<string, number>();
  for (let i = 0; i < 20; i++) {
    const a = decode((await s.handler.handle(ask(name, 'A', 2 * i), 'udp')) as Buffer);
    const aaaa = decode((await s.handler.handle(ask(name, 'AAAA', 2 * i + 1), 'udp')) as Buffer);
    firstA.set(String(D(a.answers![0])), (firstA.get(String(D(a.answers![0]))) ?? 0) + 1);
    firstAAAA.set(String(D(aaaa.answers![0])), (firstAAAA.get(String(D(aaaa.answers![0]))) ?? 0) + 1);
  }
  assert.deepEqual([...firstA.entries()].sort(), [['10.1.0.1', 10], ['10.1.0.2', 10]]);
  assert.deepEqual([...firstAAAA.entries()].sort(), [['fd00::1', 10], ['fd00::2', 10]]);
});
