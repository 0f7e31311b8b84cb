// What the Events need from manifests/kube-dns.yaml: exactly `events: create, patch`, in the
// pod's namespace (a Role) next to the list/watch kube-dns had, and the downward-API variables
// that say which pod and node report.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';

const ROOT = new URL('../../../../', import.meta.url).pathname;
type Obj = Record<string, any>;
const docs = yaml.loadAll(readFileSync(join(ROOT, 'manifests/kube-dns.yaml'), 'utf8')).filter(Boolean) as Obj[];

test('Events: create and patch on core events in the pod\'s namespace only (a Role), nothing cluster-wide', () => {
  const cluster = docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'kube-dns-ts')!;
  assert.deepEqual(cluster.rules, [
    { apiGroups: [''], resources: ['services'], verbs: ['list', 'watch'] },
    { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['list', 'watch'] },
  ]);
  const dep = docs.find((d) => d.kind === 'Deployment')!;
  const ns = dep.metadata.namespace;
  const sa = dep.spec.template.spec.serviceAccountName;
  const role = docs.find((d) => d.kind === 'Role' && d.metadata.namespace === ns)!;
  assert.deepEqual(role.rules, [{ apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] }]);
  const binding = docs.find((d) => d.kind === 'RoleBinding' && d.roleRef.kind === 'Role' && d.roleRef.name === role.metadata.name)!;
  assert.equal(binding.metadata.namespace, ns);
  assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: sa, namespace: ns }]);
});

test('kubedns and the nanny learn their pod, namespace and node from the downward API', () => {
  const dep = docs.find((d) => d.kind === 'Deployment')!;
  const env = (name: string) =>
    Object.fromEntries((dep.spec.template.spec.containers as Obj[]).find((c) => c.name === name)!.env.filter((e: Obj) => e.valueFrom).map((e: Obj) => [e.name, e.valueFrom.fieldRef.fieldPath]));
  assert.deepEqual(env('kubedns'), { POD_NAME: 'metadata.name', POD_NAMESPACE: 'metadata.namespace', NODE_NAME: 'spec.nodeName' });
  assert.deepEqual(env('dnsmasq'), { POD_NAME: 'metadata.name', POD_NAMESPACE: 'metadata.namespace', POD_UID: 'metadata.uid', NODE_NAME: 'spec.nodeName' });
});
