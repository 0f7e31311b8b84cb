// Refused zone transfers with --transfer-to on: every one counted, but a flood of them (AXFR over
// UDP costs its sender nothing and may carry any source address; an external zone behind a
// LoadBalancer faces the internet's AXFR scanners) is not a flood of log lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import * as dnsPacket from 'dns-packet';
import { createLogger } from '@kube-dns/config';
import { clusterIPService } from '@kube-dns/testkit';
import { eventually, startCluster, waitSynced } from './integration-helpers.js';

test('1,000 AXFR over UDP: each REFUSED and counted, logged once (with how many were not)', { timeout: 30_000 }, async () => {
  const lines: { msg: string; reason?: string }[] = [];
  const log = createLogger('kube-dns', 2, 'info', (line) => void lines.push(JSON.parse(line)));
  const c = await startCluster({ log, args: ['--transfer-to=10.0.0.0/8'], seed: (api) => api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1'])) });
  const s = createSocket('udp4');
  try {
    await waitSynced(c);
    let refused = 0;
    s.on('message', (m) => {
      if ((m[3]! & 0xf) === 5) refused++; // REFUSED
    });
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    for (let i = 0; i < 1000; i++) {
      s.send(dnsPacket.encode({ type: 'query', id: i, questions: [{ name: 'cluster.local', type: 'AXFR' }] }), c.dns.dnsPort, '127.0.0.1');
      if (i % 50 === 49) await new Promise((r) => setTimeout(r, 5));
    }
    await eventually(async () => assert.match((await c.http('/metrics')).body, /kubedns_zone_transfers_refused_total\{reason="udp"\} 1000\b/), 10_000, 100);
    assert.ok(refused > 900, `answered REFUSED: ${refused}`);
    const logged = lines.filter((l) => l.msg === 'zone transfer refused');
    assert.equal(logged.length, 1, `${logged.length} log lines`);
    assert.equal(logged[0]?.reason, 'udp');
  } finally {
    s.close();
    await c.stop();
  }
});
