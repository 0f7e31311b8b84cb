// The response cache keys entries by the hash the parser computes while it reads the name. Two
// names with the same hash must never answer for each other, and however many names a client
// finds behind one hash, the entries kept for it stay bounded (every lookup of them walks them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as dnsPacket from 'dns-packet';
import { buildQuery } from '@kube-dns/dns-client';
import { MAX_CHAIN, ResponseCache } from '../src/server/response-cache.js';
import { parseQuery, type ParsedQuery } from '../src/server/wire.js';
import { encodeReply } from '../src/server/encode.js';

const zone = { generation: 1, depGeneration: () => 1 };

/** The query for `name`, parsed, and the same query claiming `hash` as its key hash (a collision). */
function ask(name: string, hash?: number): { bytes: Buffer; q: ParsedQuery } {
  const bytes = buildQuery({ name, type: 'A', id: 7 });
  const parsed = parseQuery(bytes);
  assert.ok(parsed.ok);
  return { bytes, q: hash === undefined ? parsed : Object.create(parsed, { keyHash: { value: hash } }) };
}

/** The reply a server would give: `name` has the address `ip` (an answer that depends on `dep`, at generation `gen`). */
function store(cache: ResponseCache, name: string, ip: string, hash?: number, dep = 'static', gen = zone.depGeneration()): void {
  const { bytes, q } = ask(name, hash);
  const enc = encodeReply(bytes, q, { rcode: 0, aa: true, answers: [{ name, type: 'A', ttl: 30, class: 'IN', data: ip }], authorities: [], additionals: [] }, 512);
  cache.set(bytes, q, 512, enc.bytes, enc.nameOffsets, dep, undefined, gen, enc.cut);
}

function answered(cache: ResponseCache, name: string, hash?: number): string[] | undefined {
  const { bytes, q } = ask(name, hash);
  const hit = cache.get(bytes, q, 512);
  if (!hit) return undefined;
  const p = dnsPacket.decode(hit);
  assert.equal(p.questions?.[0]?.name, name, 'the reply is to the question asked');
  return (p.answers ?? []).map((a) => `${a.name} ${String((a as { data?: unknown }).data)}`);
}

test('a name is found by the hash its spelling in any case gives; other names are not', () => {
  const cache = new ResponseCache(zone);
  store(cache, 'web.default.svc.cluster.local', '10.0.0.5');
  assert.deepEqual(answered(cache, 'web.default.svc.cluster.local'), ['web.default.svc.cluster.local 10.0.0.5']);
  assert.deepEqual(answered(cache, 'WeB.Default.svc.cluster.LOCAL'), ['WeB.Default.svc.cluster.LOCAL 10.0.0.5']);
  assert.equal(answered(cache, 'web2.default.svc.cluster.local'), undefined);
});

test('a hit spells the name as its asker did, whichever spelling the entry was built for', () => {
  // a reply built for a lower-case question is sent as it is to the next lower-case one, and a
  // capital anywhere, in the entry's spelling or the asker's, is written over (the question and
  // the answer's owner)
  const cache = new ResponseCache(zone);
  store(cache, 'WEB.default.svc.cluster.local', '10.0.0.5');
  assert.deepEqual(answered(cache, 'web.default.svc.cluster.local'), ['web.default.svc.cluster.local 10.0.0.5']);
  assert.deepEqual(answered(cache, 'web.default.svc.cluster.locaL'), ['web.default.svc.cluster.locaL 10.0.0.5']);
  assert.deepEqual(answered(cache, 'WEB.default.svc.cluster.local'), ['WEB.default.svc.cluster.local 10.0.0.5']);
  const lower = new ResponseCache(zone);
  store(lower, 'api.default.svc.cluster.local', '10.0.0.6');
  assert.deepEqual(answered(lower, 'Api.default.svc.cluster.local'), ['Api.default.svc.cluster.local 10.0.0.6']);
  assert.deepEqual(answered(lower, 'api.default.svc.cluster.local'), ['api.default.svc.cluster.local 10.0.0.6']);
});

test('only A-Z are folded when names are compared: 0xC1 is not the capital of 0xE1', () => {
  // both questions claim one hash, so the comparison of the names alone decides
  const withOctet = (octet: number) => {
    const bytes = buildQuery({ name: 'x.default.svc.cluster.local', type: 'A', id: 9 });
    bytes[13] = octet; // the "x"
    const parsed = parseQuery(bytes);
    assert.ok(parsed.ok);
    return { bytes, q: Object.create(parsed, { keyHash: { value: 4242 } }) as ParsedQuery };
  };
  const cache = new ResponseCache(zone);
  const a = withOctet(0xe1);
  const enc = encodeReply(a.bytes, a.q, { rcode: 0, aa: true, answers: [{ name: 'x.default.svc.cluster.local', type: 'A', ttl: 30, class: 'IN', data: '10.0.0.7' }], authorities: [], additionals: [] }, 512);
  cache.set(a.bytes, a.q, 512, enc.bytes, enc.nameOffsets, 'static', undefined, zone.depGeneration(), enc.cut);
  const same = withOctet(0xe1);
  assert.ok(cache.get(same.bytes, same.q, 512), 'the same octets hit');
  const other = withOctet(0xc1);
  assert.equal(cache.get(other.bytes, other.q, 512), undefined, 'a latin1 capital is another name');
  const ascii = withOctet(0x41); // "A": folds to "a", not to 0xE1
  assert.equal(cache.get(ascii.bytes, ascii.q, 512), undefined);
});

test('two names behind one hash each get their own answer', () => {
  const cache = new ResponseCache(zone);
  store(cache, 'a.default.svc.cluster.local', '10.0.0.1', 12345);
  store(cache, 'b.default.svc.cluster.local', '10.0.0.2', 12345);
  assert.deepEqual(answered(cache, 'a.default.svc.cluster.local', 12345), ['a.default.svc.cluster.local 10.0.0.1']);
  assert.deepEqual(answered(cache, 'b.default.svc.cluster.local', 12345), ['b.default.svc.cluster.local 10.0.0.2']);
  // a third name with that hash, never stored, is a miss rather than someone else's answer
  assert.equal(answered(cache, 'c.default.svc.cluster.local', 12345), undefined);
  assert.equal(cache.size, 2);
});

test('however many names collide on one hash, the entries kept for it stay bounded and right', () => {
  const cache = new ResponseCache(zone);
  const names = Array.from({ length: 5 * MAX_CHAIN }, (_, i) => `pod-${i}.default.svc.cluster.local`);
  names.forEach((n, i) => store(cache, n, `10.1.0.${i}`, 99));
  assert.equal(cache.size, MAX_CHAIN, 'no more entries than MAX_CHAIN behind one hash');
  let hits = 0;
  names.forEach((n, i) => {
    const a = answered(cache, n, 99);
    if (a) {
      hits++;
      assert.deepEqual(a, [`${n} 10.1.0.${i}`]);
    }
  });
  assert.equal(hits, MAX_CHAIN);
  // other hashes are not affected
  store(cache, 'web.default.svc.cluster.local', '10.0.0.5');
  assert.deepEqual(answered(cache, 'web.default.svc.cluster.local'), ['web.default.svc.cluster.local 10.0.0.5']);
});

test('the key hash: one per name whatever its case, names apart, and seeded per process', async () => {
  const hash = (name: string): number => ask(name).q.keyHash;
  assert.equal(hash('Api.Example.COM.ns1.svc.cluster.local'), hash('api.example.com.ns1.svc.cluster.local'));
  const names = Array.from({ length: 200 }, (_, i) => `x${i}.vendor${i % 7}.com.ns${i % 20}.svc.cluster.local`);
  const hashes = new Set(names.map(hash));
  assert.equal(hashes.size, names.length, 'no two of 200 names share a hash'); // chance of a collision: 2e-5
  for (const h of hashes) assert.ok(Number.isInteger(h) && h >= 0 && h < 2 ** 30, `${h} is a small integer`);
  // a client that knows the hash function still cannot tell which names collide in this process
  const { execFile } = await import('node:child_process');
  const wire = new URL('../src/server/wire.js', import.meta.url).href;
  const script = `import { parseQuery } from ${JSON.stringify(wire)}; const q = Buffer.from('00070100000100000000000003617069076578616d706c6503636f6d0000010001', 'hex'); console.log(parseQuery(q).keyHash);`;
  const other = () => new Promise<number>((resolve, reject) => execFile(process.execPath, ['--input-type=module', '-e', script], (e, out) => (e ? reject(e) : resolve(Number(out.trim())))));
  const [a, b] = [await other(), await other()];
  assert.ok(Number.isInteger(a) && Number.isInteger(b));
  assert.notEqual(a, b, 'two processes hash api.example.com apart');
});

test('names refused behind a full chain do not push other names out of a full cache', () => {
  const cache = new ResponseCache(zone, 64);
  const others = Array.from({ length: 64 - MAX_CHAIN }, (_, i) => `svc-${i}.default.svc.cluster.local`);
  others.forEach((n, i) => store(cache, n, `10.2.0.${i}`));
  Array.from({ length: MAX_CHAIN }, (_, i) => `pod-${i}.default.svc.cluster.local`).forEach((n, i) => store(cache, n, `10.1.0.${i}`, 77));
  assert.equal(cache.size, 64, 'the cache is full');
  // a flood of further names behind that hash is refused, and evicts nothing
  for (let i = 0; i < 200; i++) store(cache, `flood-${i}.default.svc.cluster.local`, '10.9.9.9', 77);
  assert.equal(cache.size, 64);
  others.forEach((n, i) => assert.deepEqual(answered(cache, n), [`${n} 10.2.0.${i}`], `${n} still cached`));
});

// Before its map the cache keeps a bit per stored hash and answers a clear bit as a miss. The bits
// are rebuilt from the map after evictions and after many removals: no rebuild may lose an entry.
test('entries still in the cache are found after evictions rebuilt its presence filter', () => {
  const cache = new ResponseCache(zone, 64);
  const names = Array.from({ length: 500 }, (_, i) => `svc-${i}.ns${i % 7}.svc.cluster.local`);
  names.forEach((n, i) => store(cache, n, `10.3.${i >> 8}.${i & 255}`));
  assert.ok(cache.size <= 64 && cache.size >= 56, `evicted down to the newest (${cache.size})`);
  // evictions drop the oldest first, an eighth at a time: the newest 56 are all there
  names.slice(-56).forEach((n) => {
    const i = names.indexOf(n);
    assert.deepEqual(answered(cache, n), [`${n} 10.3.${i >> 8}.${i & 255}`], `${n} still answered`);
  });
  assert.equal(answered(cache, names[0]!), undefined, 'the oldest was evicted');
});

test('entries still valid are found after thousands of stale ones were dropped', () => {
  const gens = new Map([['svc/a', 1], ['svc/b', 1]]);
  const cache = new ResponseCache({ generation: 1, depGeneration: (dep: string) => gens.get(dep) ?? 0 });
  const stale = Array.from({ length: 3000 }, (_, i) => `old-${i}.a.svc.cluster.local`);
  const live = Array.from({ length: 10 }, (_, i) => `web-${i}.b.svc.cluster.local`);
  stale.forEach((n) => store(cache, n, '10.4.0.1', undefined, 'svc/a', 1));
  live.forEach((n, i) => store(cache, n, `10.5.0.${i}`, undefined, 'svc/b', 1));
  gens.set('svc/a', 2); // every answer under svc/a is now out of date
  stale.forEach((n) => assert.equal(answered(cache, n), undefined, `${n} is stale`));
  assert.equal(cache.size, live.length, 'the stale entries were dropped');
  live.forEach((n, i) => assert.deepEqual(answered(cache, n), [`${n} 10.5.0.${i}`], `${n} still answered`));
  // and a name stored after all that is found too
  store(cache, 'new.b.svc.cluster.local', '10.5.1.1', undefined, 'svc/b', 1);
  assert.deepEqual(answered(cache, 'new.b.svc.cluster.local'), ['new.b.svc.cluster.local 10.5.1.1']);
});

test("a hit carries the asker's ID, RD and CD bits, and keeps the reply's own flags", () => {
  const cache = new ResponseCache(zone);
  store(cache, 'web.default.svc.cluster.local', '10.0.0.5');
  const bytes = buildQuery({ name: 'web.default.svc.cluster.local', type: 'A', id: 0xbeef, rd: false });
  bytes[3]! |= 0x10; // CD
  const q = parseQuery(bytes);
  assert.ok(q.ok);
  const hit = cache.get(bytes, q, 512);
  assert.ok(hit);
  const p = dnsPacket.decode(hit);
  assert.equal(p.id, 0xbeef);
  assert.equal(p.flag_rd, false);
  assert.equal(p.flag_cd, true);
  assert.equal(p.flag_qr, true);
  assert.equal(p.flag_aa, true, 'the stored reply was authoritative');
  assert.equal(p.flag_ra, true);
  assert.equal(hit[3]! & 0xf, 0, 'NOERROR');
  // and the next asker's bits are its own again
  const again = buildQuery({ name: 'web.default.svc.cluster.local', type: 'A', id: 0x0102 });
  const q2 = parseQuery(again);
  assert.ok(q2.ok);
  const p2 = dnsPacket.decode(cache.get(again, q2, 512)!);
  assert.equal(p2.id, 0x0102);
  assert.equal(p2.flag_rd, true);
  assert.equal(p2.flag_cd, false);
});
