// The parsed question's name strings are built when first read, from the query's own bytes
// (server/wire.ts): a name read late, after other queries were parsed and read through the same
// scratch space, must still be that query's name, in both spellings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildQuery } from '@kube-dns/dns-client';
import { parseQuery, type ParsedQuery } from '../src/server/wire.js';

function parsed(name: string): ParsedQuery {
  const p = parseQuery(buildQuery({ name, type: 'A', id: 1 }));
  assert.ok(p.ok);
  return p;
}

test("a question's name read after other queries were parsed and read is still its own", () => {
  const first = parsed('Web.Default.SVC.cluster.local');
  const second = parsed('a-much-longer-name.of.another.query.example.com');
  const third = parsed('x.y');
  assert.equal(third.name, 'x.y');
  assert.equal(second.lname, 'a-much-longer-name.of.another.query.example.com');
  // read only now, after the others filled the scratch space with longer and shorter names
  assert.equal(first.lname, 'web.default.svc.cluster.local');
  assert.equal(first.name, 'Web.Default.SVC.cluster.local');
  assert.equal(second.name, 'a-much-longer-name.of.another.query.example.com');
});

test('only A-Z are folded in the lookup name; other octets, and the root, stay as sent', () => {
  const q = buildQuery({ name: 'x.cluster.local', type: 'A', id: 1 });
  // "Ä" as latin1 (0xC4) in place of the "x": not a letter lookups fold
  q[13] = 0xc4;
  const p = parseQuery(q);
  assert.ok(p.ok);
  assert.equal(p.lname, '\u00c4.cluster.local');
  assert.equal(p.name, p.lname);
  const root = parseQuery(buildQuery({ name: '.', type: 'NS', id: 1 }));
  assert.ok(root.ok);
  assert.equal(root.name, '');
  assert.equal(root.lname, '');
});
