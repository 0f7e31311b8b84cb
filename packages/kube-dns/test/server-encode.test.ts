// The records encode.ts writes itself (encodePlain: A, SRV, PTR and CNAME of class IN with plain
// names) must be the bytes dns-packet writes, or clients would see another reply; anything it does
// not take must be left to dns-packet. Random records, a seeded generator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as dnsPacket from 'dns-packet';
import { encodePlain } from '../src/server/encode.js';

type RR = dnsPacket.Answer;
const codec = (dnsPacket as unknown as { answer: { encode(a: RR): Buffer } }).answer;

let seed = 20261128;
const rand = (n: number) => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return Math.floor((seed / 4294967296) * n);
};
const pick = <T>(a: readonly T[]): T => a[rand(a.length)]!;
const CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_*';

function label(): string {
  const len = pick([1, 2, 5, 9, 17, 40, 63]);
  let s = '';
  for (let i = 0; i < len; i++) s += CHARS[rand(CHARS.length)];
  return s;
}

/** A plain name: 1-6 labels, sometimes with the trailing dot; or the root. */
function plainName(): string {
  if (rand(40) === 0) return '.';
  const labels = Array.from({ length: 1 + rand(6) }, label);
  let n = labels.join('.');
  while (n.length > 253) n = n.slice(n.indexOf('.') + 1);
  return rand(4) === 0 ? `${n}.` : n;
}

const ip4 = () => `${rand(256)}.${rand(256)}.${rand(256)}.${rand(256)}`;

function record(): RR {
  const ttl = pick([0, 5, 30, 3600, 2147483647, 0xffffffff]);
  switch (pick(['A', 'SRV', 'PTR', 'CNAME'] as const)) {
    case 'A':
      return { name: plainName(), type: 'A', ttl, data: ip4() };
    case 'SRV':
      return { name: plainName(), type: 'SRV', ttl, data: { priority: rand(65536), weight: rand(65536), port: rand(65536), target: plainName() } };
    case 'PTR':
      return { name: plainName(), type: 'PTR', ttl, data: plainName() };
    default:
      return { name: plainName(), type: 'CNAME', ttl, class: 'IN', data: plainName() };
  }
}

test('A, SRV, PTR and CNAME records with plain names: the bytes dns-packet writes', () => {
  for (let i = 0; i < 20_000; i++) {
    const rr = record();
    const ours = encodePlain(rr, false);
    assert.ok(ours, `not taken: ${JSON.stringify(rr)}`);
    assert.deepEqual(ours, codec.encode(rr), JSON.stringify(rr));
  }
});

test('owned by the question: a pointer to it, then what dns-packet writes after the root owner', () => {
  for (let i = 0; i < 5_000; i++) {
    const rr = record();
    const ours = encodePlain(rr, true);
    const theirs = codec.encode({ ...rr, name: '.' });
    assert.deepEqual(ours, Buffer.concat([Buffer.from([0xc0, 0x0c]), theirs.subarray(1)]), JSON.stringify(rr));
  }
});

test('names, data and records it does not write itself are left to dns-packet', () => {
  const a = (name: string, data = '10.0.0.1'): RR => ({ name, type: 'A', ttl: 30, data });
  const badNames = ['', '..', '.a', 'a..b', 'a b.c', 'caf\u00e9.example', 'x\\046y.example', `${'a'.repeat(64)}.example`, `${'abc.'.repeat(64)}x`, 'tab\t.example'];
  for (const n of badNames) {
    assert.equal(encodePlain(a(n), false), undefined, `owner ${JSON.stringify(n)}`);
    assert.equal(encodePlain({ name: 'x.example', type: 'PTR', ttl: 30, data: n }, false), undefined, `PTR data ${JSON.stringify(n)}`);
    assert.equal(encodePlain({ name: 'x.example', type: 'SRV', ttl: 30, data: { port: 1, target: n } }, false), undefined, `SRV target ${JSON.stringify(n)}`);
  }
  // but the question's own name is never read: it is a pointer
  assert.ok(encodePlain(a('caf\u00e9.example'), true));
  for (const ip of ['10.0.0', '10.0.0.1.2', '256.0.0.1', '1.2.3.1000', '::1', '1..2.3', ' 1.2.3.4', '1.2.3.4 ', '']) {
    assert.equal(encodePlain(a('x.example', ip), false), undefined, `A data ${JSON.stringify(ip)}`);
  }
  assert.equal(encodePlain({ name: 'x.example', type: 'AAAA', ttl: 30, data: '::1' }, false), undefined);
  assert.equal(encodePlain({ name: 'x.example', type: 'TXT', ttl: 30, data: 'hi' }, false), undefined);
  assert.equal(encodePlain({ name: 'x.example', type: 'A', class: 'CH', ttl: 30, data: '10.0.0.1' }, false), undefined);
  assert.equal(encodePlain({ name: 'x.example', type: 'A', flush: true, ttl: 30, data: '10.0.0.1' } as RR, false), undefined);
});

test('a value dns-packet refuses is refused here too (the reply leaves the record out)', () => {
  assert.throws(() => codec.encode({ name: 'x.example', type: 'SRV', ttl: 30, data: { port: 70000, target: 'y.example' } }));
  assert.throws(() => encodePlain({ name: 'x.example', type: 'SRV', ttl: 30, data: { port: 70000, target: 'y.example' } }, false));
  assert.throws(() => encodePlain({ name: 'x.example', type: 'A', ttl: -1, data: '10.0.0.1' }, false));
});
