// What the Events need from manifests/kube-dns.yaml: exactly `events: create, patch` more than
// the list/watch kube-dns had, and the downward-API variables that say which pod and node report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';

const ROOT = new URL('../../../../', import.meta.url).pathname;
type Obj = Record<string, any>;
const docs = yaml.loadAll(readFileSync(join(ROOT, 'manifests/kube-dns.yaml'), 'utf8')).filter(Boolean) as Obj[];

test('the ClusterRole grants exactly create and patch on core events besides list/watch of Services, EndpointSlices and Namespaces', () => {
  const role = docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'kube-dns-ts')!;
  assert.deepEqual(role.rules, [
    { apiGroups: [''], resources: ['services'], verbs: ['list', 'watch'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
  ]);
});

test('kubedns and the nanny learn their pod, namespace and node from the downward API', () => {
  const dep = docs.find((d) => d.kind === 'Deployment')!;
  const env = (name: string) =>
    Object.fromEntries((dep.spec.template.spec.containers as Obj[]).find((c) => c.name === name)!.env.filter((e: Obj) => e.valueFrom).map((e: Obj) => [e.name, e.valueFrom.fieldRef.fieldPath]));
  assert.deepEqual(env('kubedns'), { POD_NAME: 'metadata.name', POD_NAMESPACE: 'metadata.namespace', NODE_NAME: 'spec.nodeName' });
  assert.deepEqual(env('dnsmasq'), { POD_NAME: 'metadata.name', POD_NAMESPACE: 'metadata.namespace', POD_UID: 'metadata.uid', NODE_NAME: 'spec.nodeName' });
});
