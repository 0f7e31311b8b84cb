// A stub domain whose server sends the domain's queries back to kube-dns: the stub server is
// kube-dns's own address, or (without dnsmasq in front) the kube-dns Service IP, or a resolver
// that forwards the domain to the cluster DNS. Before, every client query for the domain bounced
// through about a thousand forwards until --max-concurrent-forwards was full, so other names got
// SERVFAIL, and nothing counted it. It must be caught as an upstream loop is: counted, logged
// naming the domain and the server, the server dropped; and a forward that comes straight back to
// us must never be forwarded again.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLogger, type Nameserver } from '@kube-dns/config';
import { buildQuery, datas, exchange, query } from '@kube-dns/dns-client';
import { clusterIPService, startTestDnsServer } from '@kube-dns/testkit';
import { Forwarder } from '../src/forward/forwarder.js';
import { editConfig, type Cluster, eventually, startCluster, waitSynced } from './integration-helpers.js';
import { startStack } from './server-stack.js';

/** A logger whose lines are kept (JSON objects). */
function capturingLog() {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const log = createLogger('kube-dns', 2, 'info', (line) => void lines.push(JSON.parse(line)));
  return { log, lines };
}

/** kubedns_forward_loops_detected_total as scraped. */
async function loopsCounted(c: Cluster): Promise<number> {
  const m = /^kubedns_forward_loops_detected_total (\d+)$/m.exec((await c.http('/metrics')).body);
  return Number(m?.[1]);
}

const requestsTo = (body: string, server: string): number => {
  const m = new RegExp(`^kubedns_forward_requests_total\\{server="${server.replace(/[.[\]]/g, '\\$&')}"\\} (\\d+)$`, 'm').exec(body);
  return m ? Number(m[1]) : 0;
};

/**
 * The kube-dns Service IP without dnsmasq in front: whatever it gets reaches kube-dns again (at
 * the port given to `to`), and kube-dns's rcode comes back.
 */
async function relayBack(t: TestContext) {
  let kubeDnsPort = 0;
  const relay = await startTestDnsServer({
    handler: async (q) => {
      if (!kubeDnsPort) return { rcode: 'SERVFAIL' };
      const reply = await exchange({ host: '127.0.0.1', port: kubeDnsPort }, buildQuery({ name: q.name, type: q.type as 'A' }), 'udp', 3000).catch(() => undefined);
      return reply ? { rcode: (reply.readUInt16BE(2) & 0xf) === 3 ? 'NXDOMAIN' : 'SERVFAIL' } : 'drop';
    },
  });
  t.after(() => relay.close());
  return { relay, to: (port: number) => (kubeDnsPort = port) };
}

test('a stub server that relays the domain back to kube-dns (the Service IP, say) is detected, counted, logged and dropped', async (t) => {
  const { relay, to } = await relayBack(t);
  const honest = await startTestDnsServer({ answerIp: '192.0.2.44' });
  t.after(() => honest.close());
  const { log, lines } = capturingLog();
  const c = await startCluster({ log, configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${honest.port}`]) } });
  t.after(() => c.stop());
  to(c.server.port);
  await waitSynced(c);

  const server = `127.0.0.1:${relay.port}`;
  await editConfig(c, 'stubDomains', JSON.stringify({ 'corp.example': [server] }));
  await eventually(async () => assert.equal(await loopsCounted(c), 1, 'kubedns_forward_loops_detected_total'), 5000);
  const said = lines.find((l) => l.level === 50 && /loop/.test(l.msg));
  assert.ok(said, 'an error line says so');
  assert.match(said.msg, /corp\.example/, 'naming the stub domain');
  assert.ok(said.msg.includes(server), 'and the server');

  // the domain's names now fail at once, without going round; other names are answered as before
  const before = relay.questions.length;
  const started = Date.now();
  const r = await c.ask('x.corp.example', 'A');
  assert.equal(r.packet.rcode, 'SERVFAIL');
  assert.ok(Date.now() - started < 300, `answered at once: ${Date.now() - started} ms`);
  assert.equal(relay.questions.length, before, 'the looping stub server is no longer asked');
  assert.deepEqual(datas((await c.ask('www.example.net', 'A')).packet.answers), ['192.0.2.44']);
  assert.equal(await loopsCounted(c), 1, 'counted once');
});

test('a stub server named by the kube-dns Service\'s cluster name is probed once the records are in', async (t) => {
  const { relay, to } = await relayBack(t);
  // in the ConfigMap from the start: the first probes go out before the Service is known
  const c = await startCluster({
    configFiles: { stubDomains: JSON.stringify({ 'corp.example': [`kube-dns.kube-system.svc.cluster.local:${relay.port}`] }) },
    seed: (api) => api.upsert('services', clusterIPService('kube-system', 'kube-dns', ['127.0.0.1'], [{ name: 'dns', port: 53, protocol: 'UDP' }])),
  });
  t.after(() => c.stop());
  to(c.server.port);
  await waitSynced(c);
  await eventually(async () => assert.equal(await loopsCounted(c), 1, 'kubedns_forward_loops_detected_total'), 5000);
  assert.equal((await c.ask('x.corp.example', 'A')).packet.rcode, 'SERVFAIL');
});

test("a stub server that is kube-dns's own address is detected the same way", async (t) => {
  const { log, lines } = capturingLog();
  const c = await startCluster({ log });
  t.after(() => c.stop());
  await waitSynced(c);
  const self = `127.0.0.1:${c.server.port}`;
  await editConfig(c, 'stubDomains', JSON.stringify({ 'corp.example': [self] }));
  await eventually(async () => assert.equal(await loopsCounted(c), 1, 'kubedns_forward_loops_detected_total'), 5000);
  assert.ok(lines.some((l) => l.level === 50 && l.msg.includes('corp.example') && l.msg.includes(self)), 'logged, naming the domain and the server');
  const r = await c.ask('x.corp.example', 'A');
  assert.equal(r.packet.rcode, 'SERVFAIL');
  assert.ok(requestsTo((await c.http('/metrics')).body, self) < 5, 'a handful of forwards to ourselves, not a thousand');
});

test('a forward that comes straight back to kube-dns is answered SERVFAIL at once, never forwarded again', async (t) => {
  // no loop probes here (the stack does not start them): only the check of queries in flight
  const forwarder = new Forwarder({ log: createLogger('kube-dns', 2, 'silent'), timeoutMs: 1000 });
  t.after(() => forwarder.close());
  const honest = await startTestDnsServer({ answerIp: '192.0.2.45' });
  t.after(() => honest.close());
  forwarder.setUpstreams([{ host: '127.0.0.1', port: honest.port, family: 4, raw: '' }]);
  const stack = await startStack({ handler: { forwarder } });
  t.after(() => stack.stop());
  const self: Nameserver = { host: '127.0.0.1', port: stack.server.port, family: 4, raw: '' };
  forwarder.setStubDomains(new Map([['corp.example', [self]]]));

  const started = Date.now();
  const r = await query(stack.server, { name: 'x.corp.example', type: 'A', timeoutMs: 3000 });
  const ms = Date.now() - started;
  assert.equal(r.packet.rcode, 'SERVFAIL');
  const sent = forwarder.stats.perServer.get(`127.0.0.1:${stack.server.port}`)?.requests;
  assert.equal(sent, 1, `forwarded to ourselves once, not round and round (${sent} forwards, ${ms} ms)`);
  assert.equal(forwarder.loopsDetected, 1, 'counted as a loop');
  // names outside the domain still go to the upstream
  const other = await query(stack.server, { name: 'www.example.net', type: 'A', timeoutMs: 3000 });
  assert.deepEqual(datas(other.packet.answers), ['192.0.2.45']);
});
