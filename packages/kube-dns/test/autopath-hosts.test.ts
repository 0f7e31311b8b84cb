// --autopath and the ConfigMap's `hosts` key: dnsmasq answers those names itself (the nanny
// writes them into its hosts directory), often to override an upstream's address. A pod's search
// reaches such a name through dnsmasq; the walk must not answer it from the upstream instead.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pod } from '@kube-dns/testkit';
import { askFrom, autopathCounts, manifestOptionalArg, question, records } from './autopath-helpers.js';
import { eventually } from './integration-helpers.js';
import { startPod } from './pod-through-dnsmasq.js';

const SHOP = '127.0.0.2'; // a pod of namespace shop
const HOSTS = '10.0.0.5 api.partner.test\n';

test('autopath leaves a name of the ConfigMap hosts to dnsmasq: the pod gets the override, not the upstream address', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'autopath-hosts-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // what the nanny gives dnsmasq for the ConfigMap's hosts key
  await writeFile(join(dir, 'hosts'), HOSTS);
  const p = await startPod({
    upstreamHandler: (q) => (q.name === 'api.partner.test' && q.type === 'A' ? { answers: [{ name: q.name, type: 'A', ttl: 60, data: '192.0.2.200' }] } : { rcode: 'NXDOMAIN' }),
    extraKubednsArgs: [manifestOptionalArg('--autopath')],
    extraDnsmasqArgs: [manifestOptionalArg('--add-subnet'), manifestOptionalArg('--strip-subnet'), `--addn-hosts=${join(dir, 'hosts')}`],
    seed: (api) => api.upsert('pods', pod('shop', 'web-0', [SHOP])),
  });
  t.after(() => p.stop());
  // the same key in kube-dns's copy of the ConfigMap
  await writeFile(join(p.cluster.configDir, '.hosts.tmp'), HOSTS);
  await rename(join(p.cluster.configDir, '.hosts.tmp'), join(p.cluster.configDir, 'hosts'));
  await eventually(async () => assert.equal(p.cluster.dns.config().hosts.length, 1, 'kube-dns read the key'), 3000);
  const dnsmasq = { host: p.dnsmasq.host, port: p.dnsmasq.port };

  // glibc's search for api.partner.test (2 dots, ndots:5): the first name that is not NXDOMAIN wins
  const search = ['api.partner.test.shop.svc.cluster.local', 'api.partner.test.svc.cluster.local', 'api.partner.test.cluster.local', 'api.partner.test'];
  const lookup = async () => {
    for (const n of search) {
      const r = await askFrom(SHOP, dnsmasq, question(n, 'A'));
      if (r.rcode !== 'NXDOMAIN') return records(r);
    }
    return [];
  };
  assert.deepEqual(await lookup(), [['A', 'api.partner.test', '10.0.0.5']]);
  const n = autopathCounts((await p.cluster.http('/metrics')).body);
  assert.ok(n.hosts_name! >= 1, 'counted');
  assert.equal(n.upstream, 0, 'never completed from the upstream');
});
