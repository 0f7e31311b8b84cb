// The zone options an operator edits live in the kube-dns ConfigMap (ignoreEmptyService,
// transferTo): applied without a restart, a bad value rejected with the last good state kept,
// a removed key gives the flag back.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService } from '@kube-dns/testkit';
import { parseConfig } from '@kube-dns/config';
import { editConfig, eventually, startCluster, waitSynced, type Cluster } from './integration-helpers.js';

const Z = 'cluster.local';
let c: Cluster;
before(async () => {
  c = await startCluster({ seed: (api) => api.upsert('services', clusterIPService('default', 'bare', ['10.11.0.1'])) });
  await waitSynced(c);
});
after(() => c.stop());

const axfr = async (): Promise<string> => (await execa('dig', ['@127.0.0.1', '-p', String(c.dns.dnsPort), '+time=2', '+tries=1', Z, 'AXFR'], { reject: false })).stdout;
const bare = async (): Promise<string> => {
  const r = await c.ask(`bare.default.svc.${Z}`, 'A');
  return r.packet.rcode === 'NOERROR' ? datas(r.packet.answers).join() : r.packet.rcode!;
};

test('ignoreEmptyService: on and off live; a bad value is rejected and the last good state stays', async () => {
  assert.equal(await bare(), '10.11.0.1');
  await editConfig(c, 'ignoreEmptyService', 'true');
  await eventually(async () => assert.equal(await bare(), 'NXDOMAIN'), 5000);
  await editConfig(c, 'ignoreEmptyService', 'maybe');
  await eventually(async () => assert.match((await c.http('/metrics')).body, /kubedns_config_rejects_total [1-9]/), 5000);
  assert.equal(await bare(), 'NXDOMAIN', 'last good value kept');
  await rm(join(c.configDir, 'ignoreEmptyService'));
  await eventually(async () => assert.equal(await bare(), '10.11.0.1'), 5000);
});

test('transferTo: transfers turned on and off without a restart', async () => {
  assert.match(await axfr(), /Transfer failed/);
  await editConfig(c, 'transferTo', '127.0.0.0/8');
  await eventually(async () => assert.match(await axfr(), new RegExp(`bare\\.default\\.svc\\.${Z}\\.\\s+30\\s+IN\\s+A\\s+10\\.11\\.0\\.1`)), 5000, 100);
  await editConfig(c, 'transferTo', '');
  await eventually(async () => assert.match(await axfr(), /Transfer failed/), 5000, 100);
});

test('the ConfigMap parser names a bad zone key', () => {
  const r = parseConfig({ ignoreEmptyService: 'yes', transferTo: '10.0.0.0/99' });
  assert.equal(r.ok, false);
  assert.deepEqual(!r.ok && r.errors.map((e) => e.key).sort(), ['ignoreEmptyService', 'transferTo']);
});
