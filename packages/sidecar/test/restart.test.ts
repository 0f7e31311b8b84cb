// dnsmasq's counters restart at zero with dnsmasq; the exported ones must not go down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { query } from '@kube-dns/dns-client';
import { startDnsmasq } from '@kube-dns/testkit';
import { startSidecar } from '../src/index.js';
import { testOptions } from './fixtures.js';
import { scrape, value, waitFor } from './helpers.js';

test('counters stay monotonic across a dnsmasq restart and keep growing after it', async (t) => {
  const args = ['--cache-size=500', '--address=/ok.local/1.2.3.4'];
  let dm = await startDnsmasq(args);
  t.after(() => dm.stop());
  const port = dm.port;
  const sidecar = await startSidecar(testOptions({ dnsmasqPort: port, dnsmasqPollIntervalMs: 50 }));
  t.after(() => sidecar.stop());

  const samples: number[] = [];
  const hits = async () => {
    const v = value((await scrape(sidecar.port)).families, 'kubedns_dnsmasq_hits')!;
    samples.push(v);
    return v;
  };
  for (let i = 0; i < 300; i++) await query({ host: '127.0.0.1', port }, { name: 'ok.local', type: 'A' });
  const before = await waitFor('hits from the first dnsmasq', async () => {
    const v = await hits();
    return v >= 300 && v;
  });

  await dm.stop();
  const errors = async () => value((await scrape(sidecar.port)).families, 'kubedns_dnsmasq_errors')!;
  await waitFor('a failed poll while dnsmasq is down', async () => (await errors()) >= 1);
  // Polls that dnsmasq answered between that reading and its exit still counted (each poll's own
  // CHAOS questions are hits too): read the total once it is frozen, then check that it stays so.
  const frozen = await hits();
  assert.ok(frozen >= before, `hits went down while dnsmasq stopped: ${before} then ${frozen}`);
  const failed = await errors();
  await waitFor('another failed poll', async () => (await errors()) > failed);
  assert.equal(await hits(), frozen, 'no change while dnsmasq is down');
  dm = await startDnsmasq(args, { port });

  // Keep querying the new dnsmasq: once a poll has taken its low counts as base, growth shows.
  await waitFor('hits to grow past the first dnsmasq total', async () => {
    await query({ host: '127.0.0.1', port }, { name: 'ok.local', type: 'A' }).catch(() => undefined);
    return (await hits()) > frozen;
  });
  for (let i = 1; i < samples.length; i++) assert.ok(samples[i]! >= samples[i - 1]!, `hits went down: ${samples.join(' ')}`);
  // The export is the first dnsmasq's total plus what the new one counted, so it exceeds the
  // new dnsmasq's own count (a "max of the readings" would not).
  const { families } = await scrape(sidecar.port);
  const newCount = await query({ host: '127.0.0.1', port }, { name: 'hits.bind', type: 'TXT', class: 'CH' });
  const newHits = Number(String((newCount.packet.answers![0] as { data: Buffer[] }).data[0]));
  assert.ok(value(families, 'kubedns_dnsmasq_hits')! > newHits, `exported ${value(families, 'kubedns_dnsmasq_hits')}, new dnsmasq ${newHits}`);
  assert.equal(value(families, 'kubedns_dnsmasq_max_size'), 500, 'max_size does not double after a restart');
});
