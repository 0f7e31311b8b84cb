// Label selectors of --labels and --namespace-labels: the Kubernetes syntax, and a clear error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesLabels, parseLabelSelector } from '../src/zones/label-selector.js';
import { parseOptions } from '../src/options.js';

const m = (sel: string, labels?: Record<string, string>): boolean => matchesLabels(parseLabelSelector(sel), labels);

test('equality, inequality, set and existence requirements, all of them must hold', () => {
  assert.equal(m('app=web', { app: 'web' }), true);
  assert.equal(m('app==web', { app: 'db' }), false);
  assert.equal(m('tier!=internal', {}), true, 'a missing key satisfies !=');
  assert.equal(m('tier!=internal', { tier: 'internal' }), false);
  assert.equal(m('env in (prod, staging)', { env: 'staging' }), true);
  assert.equal(m('env in (prod,staging)', { env: 'dev' }), false);
  assert.equal(m('env notin (dev)', { env: 'prod' }), true);
  assert.equal(m('dns.example.com/expose', { 'dns.example.com/expose': '' }), true);
  assert.equal(m('!legacy', { legacy: 'x' }), false);
  assert.equal(m('app=web,env in (prod),!legacy', { app: 'web', env: 'prod' }), true);
  assert.equal(m('app=web,env in (prod),!legacy', { app: 'web', env: 'prod', legacy: '1' }), false);
  assert.equal(m('', undefined), true);
});

test('a malformed selector is one clear flag error at start', () => {
  for (const [arg, want] of [
    ['--labels=app in (a', /--labels=app in \(a: not a label selector: unbalanced "\("/],
    ['--labels=app=we b', /not a valid label value/],
    ['--namespace-labels=a,,b', /--namespace-labels=a,,b: not a label selector: empty requirement/],
    ['--namespaces=default,Bad_NS', /--namespaces: "Bad_NS" is not a valid namespace name/],
    ['--labels=tier>1', /--labels=tier>1: not a label selector: "tier>1": the ">" operator is not supported \(=, ==, !=, in, notin, key and !key are\)/],
    ['--namespace-labels=a=b, rank < 3', /"rank < 3": the "<" operator is not supported/],
  ] as const) {
    assert.throws(() => parseOptions([arg]), want, arg);
  }
});

test('zone options are all off by default', () => {
  const z = parseOptions([]).zones;
  assert.deepEqual(z, { endpointPodNames: false, namespaces: [], ignoreEmptyService: false, externalZones: [] });
});
