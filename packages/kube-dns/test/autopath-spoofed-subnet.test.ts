// A client that puts its own client-subnet option in its query, claiming the address of a pod of
// another namespace, through the pod's real dnsmasq with the manifest's autopath lines: dnsmasq
// with --add-subnet alone passes the client's option on over loopback, where kube-dns believes
// it; with the manifest's --strip-subnet it puts the client's real address in its place.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pod } from '@kube-dns/testkit';
import { askFrom, autopathCounts, question, records, startAutopathPod, subnetOf } from './autopath-helpers.js';

const SHOP = '127.0.0.2'; // a pod of namespace shop
const BANK = '127.0.0.3'; // a pod of namespace bank
const STRANGER = '127.0.0.9'; // no pod has it

test("through dnsmasq, a client's own client-subnet option cannot make it another pod: it gets its own answer", async (t) => {
  const pod0 = await startAutopathPod((api) => {
    api.upsert('pods', pod('shop', 'web-0', [SHOP]));
    api.upsert('pods', pod('bank', 'api-0', [BANK]));
  });
  t.after(() => pod0.stop());
  const dnsmasq = { host: pod0.dnsmasq.host, port: pod0.dnsmasq.port };
  const bankName = 'example.test.bank.svc.cluster.local';
  // the real bank pod: its search path is completed
  assert.deepEqual(records(await askFrom(BANK, dnsmasq, question(bankName)))[0], ['CNAME', bankName, 'example.test']);
  // no pod, and a shop pod, each claiming to be the bank pod: the plain NXDOMAIN, as for who they are
  for (const from of [STRANGER, SHOP]) {
    const r = await askFrom(from, dnsmasq, question(bankName, 'A', [subnetOf(BANK)]));
    assert.equal(r.rcode, 'NXDOMAIN', `${from} claiming ${BANK}: ${JSON.stringify(records(r))}`);
    assert.deepEqual(records(r), []);
  }
  const c = autopathCounts((await pod0.cluster.http('/metrics')).body);
  assert.equal(c.upstream, 1, 'only the real bank pod was completed');
  assert.equal(c.unknown_pod, 1, 'the stranger, seen as itself');
  assert.equal(c.other_namespace, 1, 'the shop pod, seen as itself');
});
