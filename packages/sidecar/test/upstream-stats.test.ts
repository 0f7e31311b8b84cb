// kubedns_dnsmasq_server_{queries,failures} from dnsmasq's servers.bind, and the sidecar's own
// check of each server (kubedns_dnsmasq_server_up), against a real dnsmasq.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { query } from '@kube-dns/dns-client';
import { createSocket } from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, startDnsmasq, startTestDnsServer } from '@kube-dns/testkit';
import { startSidecar } from '../src/index.js';
import { testOptions } from './fixtures.js';
import { scrape, value, waitFor } from './helpers.js';

test('per-upstream counts still show with many upstreams, when servers.bind no longer fits a 512-byte UDP reply', async (t) => {
  const upstream = await startTestDnsServer({ answerIp: '192.0.2.7' });
  t.after(() => upstream.close());
  // 60 stub domains on servers of their own (never asked here): dnsmasq answers servers.bind over
  // UDP with TC set and no answer at all, the whole list only over TCP
  const stubs = Array.from({ length: 60 }, (_, i) => `--server=/d${i}.example/198.51.100.${i + 1}`);
  const dm = await startDnsmasq([...stubs, `--server=127.0.0.1#${upstream.port}`]);
  t.after(() => dm.stop());
  const sidecar = await startSidecar(testOptions({ dnsmasqPort: dm.port, dnsmasqPollIntervalMs: 200 }));
  t.after(() => sidecar.stop());

  for (const name of ['a1.example', 'a2.example', 'a3.example']) await query({ host: dm.host, port: dm.port }, { name, type: 'A' });
  const upstreamKey = { server: `127.0.0.1#${upstream.port}` };
  const families = await waitFor('the upstream to show in the metrics', async () => {
    const { families: f } = await scrape(sidecar.port);
    return value(f, 'kubedns_dnsmasq_server_queries', upstreamKey)! >= 3 && f;
  });
  assert.equal(value(families, 'kubedns_dnsmasq_server_queries', { server: '198.51.100.60#53' }), 0);
  assert.equal(value(families, 'kubedns_dnsmasq_errors'), 0);
});

test('kubedns_dnsmasq_server_up: 1 for a server that answers, 0 for one that never replies or is not there (dnsmasq counts no failure for either)', async (t) => {
  const live = await startTestDnsServer({ answerIp: '192.0.2.7' });
  t.after(() => live.close());
  const hole = createSocket('udp4'); // takes queries, answers none
  await new Promise<void>((r) => hole.bind(0, '127.0.0.1', () => r()));
  t.after(() => hole.close());
  const closed = await freePort();
  const holePort = (hole.address() as { port: number }).port;
  const dm = await startDnsmasq([`--server=/hole.test/127.0.0.1#${holePort}`, `--server=/closed.test/127.0.0.1#${closed}`, `--server=127.0.0.1#${live.port}`]);
  t.after(() => dm.stop());
  const sidecar = await startSidecar(testOptions({ dnsmasqPort: dm.port, dnsmasqPollIntervalMs: 500 }));
  t.after(() => sidecar.stop());
  // what clients see: the hole's and the closed port's names fail, and dnsmasq's own count says nothing
  await query({ host: dm.host, port: dm.port }, { name: 'x.hole.test', type: 'A', timeoutMs: 1500 }).catch(() => undefined);
  const families = await waitFor('every server checked', async () => {
    const { families: f } = await scrape(sidecar.port);
    return [holePort, closed, live.port].every((p) => value(f, 'kubedns_dnsmasq_server_up', { server: `127.0.0.1#${p}` }) !== undefined) && f;
  });
  assert.equal(value(families, 'kubedns_dnsmasq_server_up', { server: `127.0.0.1#${live.port}` }), 1);
  assert.equal(value(families, 'kubedns_dnsmasq_server_up', { server: `127.0.0.1#${holePort}` }), 0);
  assert.equal(value(families, 'kubedns_dnsmasq_server_up', { server: `127.0.0.1#${closed}` }), 0);
  assert.equal(value(families, 'kubedns_dnsmasq_server_failures', { server: `127.0.0.1#${holePort}` }), 0, 'why the check exists');
});

test('kubedns_dnsmasq_server_up: kube-dns (which forwards . NS to upstreams that are down) and a resolver that drops CHAOS questions both read 1; with 1 s polls, a server answering in 1.5 s too', async (t) => {
  // kube-dns as the manifest's server for the cluster zone: CHAOS refused at once, `. NS` answered
  // only after its own upstreams' 5 s deadline (here: never within the check)
  const kubeDns = await startTestDnsServer({ handler: async (q) => (q.class === 'CH' ? { rcode: 'REFUSED' } : (await sleep(3000), { rcode: 'SERVFAIL' })) });
  t.after(() => kubeDns.close());
  const noChaos = await startTestDnsServer({ handler: (q) => (q.class === 'CH' ? 'drop' : { rcode: 'NOERROR' }) });
  t.after(() => noChaos.close());
  const slow = await startTestDnsServer({ handler: async () => (await sleep(1500), { rcode: 'REFUSED' }) });
  t.after(() => slow.close());
  const dm = await startDnsmasq([`--server=/cluster.local/127.0.0.1#${kubeDns.port}`, `--server=/corp.test/127.0.0.1#${slow.port}`, `--server=127.0.0.1#${noChaos.port}`]);
  t.after(() => dm.stop());
  const sidecar = await startSidecar(testOptions({ dnsmasqPort: dm.port, dnsmasqPollIntervalMs: 1000 }));
  t.after(() => sidecar.stop());
  const families = await waitFor('every server checked', async () => {
    const { families: f } = await scrape(sidecar.port);
    return [kubeDns.port, noChaos.port, slow.port].every((p) => value(f, 'kubedns_dnsmasq_server_up', { server: `127.0.0.1#${p}` }) !== undefined) && f;
  });
  for (const s of [kubeDns, noChaos, slow]) assert.equal(value(families, 'kubedns_dnsmasq_server_up', { server: `127.0.0.1#${s.port}` }), 1, `127.0.0.1#${s.port}`);
});

test('kubedns_dnsmasq_server_up: no series while dnsmasq cannot be read, not its last value kept as if fresh', async (t) => {
  const live = await startTestDnsServer({ answerIp: '192.0.2.7' });
  t.after(() => live.close());
  const dm = await startDnsmasq([`--server=127.0.0.1#${live.port}`]);
  t.after(() => dm.stop());
  const sidecar = await startSidecar(testOptions({ dnsmasqPort: dm.port, dnsmasqPollIntervalMs: 300 }));
  t.after(() => sidecar.stop());
  const key = { server: `127.0.0.1#${live.port}` };
  await waitFor('the server checked', async () => value((await scrape(sidecar.port)).families, 'kubedns_dnsmasq_server_up', key) === 1);
  await dm.stop(); // dnsmasq gone (its upstream with it, for all this sidecar can tell)
  await waitFor('the series gone', async () => value((await scrape(sidecar.port)).families, 'kubedns_dnsmasq_server_up', key) === undefined);
});
