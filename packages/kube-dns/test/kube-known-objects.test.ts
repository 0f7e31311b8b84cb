// The reflector skips an object whose resourceVersion it has already applied: two versions that
// differ as strings must never compare equal once stored compactly, or a change would be lost.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compactVersion, KnownObjects } from '../src/kube/known-objects.js';

test('stored resourceVersions compare equal exactly when their strings are equal', () => {
  const versions = fc.oneof(fc.string(), fc.stringMatching(/^[0-9]{1,20}$/), fc.bigInt({ min: 0n, max: 10n ** 18n }).map(String));
  fc.assert(
    fc.property(versions, versions, (a, b) => {
      assert.equal(compactVersion(a) === compactVersion(b), a === b, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    }),
    { numRuns: 5000 },
  );
  for (const [a, b] of [['0123', '123'], ['1e3', '1000'], ['9007199254740993', '9007199254740992'], ['', '0']] as const) {
    assert.notEqual(compactVersion(a), compactVersion(b), `${a} vs ${b}`);
  }
});

test('known objects are counted per namespace and name, and deleted exactly once', () => {
  const k = new KnownObjects();
  k.set('ns1', 'a', compactVersion('10'));
  k.set('ns2', 'a', compactVersion('11'));
  k.set('ns1', 'a', compactVersion('12')); // an update, not a new object
  assert.equal(k.size, 2);
  assert.equal(k.get('ns1', 'a'), compactVersion('12'));
  assert.equal(k.get('ns1', 'b'), undefined);
  const listed = new KnownObjects();
  listed.set('ns2', 'a', compactVersion('11'));
  listed.set('ns3', 'c', compactVersion('13')); // new: not missing from anything
  assert.deepEqual(k.missingFrom(listed), [['ns1', 'a']], 'what a list no longer has was deleted');
  assert.deepEqual(k.missingFrom(k), []);
  assert.equal(k.delete('ns1', 'a'), true);
  assert.equal(k.delete('ns1', 'a'), false);
  assert.equal(k.size, 1);
});
