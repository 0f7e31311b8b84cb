// Target names no message can carry. The API server checks an ExternalName's target and a load
// balancer's hostname only as a whole (253 characters), so a label of 64 octets or more reaches
// us; written as it is, its length octet reads as a compression pointer. One such Service used to
// break every reply for its name and every AXFR of the zone it is in.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execa } from 'execa';
import { createLogger } from '@kube-dns/config';
import { datas } from '@kube-dns/dns-client';
import { clusterIPService, externalNameService, externalService } from '@kube-dns/testkit';
import { startCluster, waitSynced } from './integration-helpers.js';

const long70 = `${'a'.repeat(70)}.example.org`;
const edge63 = `${'b'.repeat(63)}.example.org`;
const long64 = `${'x'.repeat(64)}.elb.amazonaws.com`;

test('a target name with a label over 63 octets: left out with a warning; every other answer and both zones\' AXFR stay whole', { timeout: 60_000 }, async () => {
  const lines: { level: number; msg: string; service?: string; names?: string[] }[] = [];
  const log = createLogger('kube-dns', 2, 'info', (line) => void lines.push(JSON.parse(line)));
  const c = await startCluster({
    log,
    args: ['--transfer-to=127.0.0.1', '--external-zone=example.com'],
    seed: (api) => {
      api.upsert('services', externalNameService('ns', 'longlabel', long70));
      api.upsert('services', externalNameService('ns', 'edge', `${edge63}.`));
      api.upsert('services', clusterIPService('ns', 'web', ['10.0.0.1']));
      api.upsert('services', externalService('ns', 'lbh', '10.0.0.5', { ingress: [long64] }));
      api.upsert('services', externalService('ns', 'lbmix', '10.0.0.6', { ingress: [long64, '203.0.113.9'] }));
    },
  });
  try {
    await waitSynced(c);
    // the ExternalName without a usable target: a well-formed NODATA, twice (the second could be a cached copy)
    for (let i = 0; i < 2; i++) {
      const r = await c.ask('longlabel.ns.svc.cluster.local', 'A');
      assert.equal(r.packet.rcode, 'NOERROR');
      assert.deepEqual(r.packet.answers, []);
    }
    // 63 octets is still a label
    assert.deepEqual(datas((await c.ask('edge.ns.svc.cluster.local', 'CNAME')).packet.answers), [`${edge63}.`]);
    // a load balancer named only by an unusable hostname has no outside address; one with an IP keeps it
    assert.equal((await c.ask('lbh.ns.example.com', 'A')).packet.rcode, 'NXDOMAIN');
    assert.deepEqual(datas((await c.ask('lbmix.ns.example.com', 'A')).packet.answers), ['203.0.113.9']);

    for (const [zone, expect] of [['cluster.local', /^web\.ns\.svc\.cluster\.local\.\s+\d+\s+IN\s+A\s+10\.0\.0\.1$/m], ['example.com', /^lbmix\.ns\.example\.com\.\s+\d+\s+IN\s+A\s+203\.0\.113\.9$/m]] as const) {
      const axfr = (await execa('dig', ['@127.0.0.1', '-p', String(c.dns.dnsPort), '+time=3', '+tries=1', zone, 'AXFR'], { reject: false })).stdout;
      assert.match(axfr, /XFR size: \d+ records/, `${zone}: a complete transfer\n${axfr}`);
      assert.match(axfr, expect);
      assert.doesNotMatch(axfr, /a{64}|x{64}/, `${zone}: no record with the unusable name`);
    }
    assert.match((await execa('dig', ['@127.0.0.1', '-p', String(c.dns.dnsPort), 'cluster.local', 'AXFR'])).stdout, new RegExp(`edge\\.ns\\.svc\\.cluster\\.local\\.\\s+\\d+\\s+IN\\s+CNAME\\s+${edge63}\\.`));

    const warned = lines.filter((l) => l.level === 40 && /cannot be answered/.test(l.msg));
    assert.deepEqual(warned.map((l) => [l.service, l.names]).sort(), [['ns/lbh', [long64]], ['ns/lbmix', [long64]], ['ns/longlabel', [long70]]]);
  } finally {
    await c.stop();
  }
});
