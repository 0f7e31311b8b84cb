import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseStubDomains, silentLogger } from '@kube-dns/config';
import { startTestDnsServer } from '@kube-dns/testkit';
import { isClusterName, resolveStubDomains } from '../src/resolve-names.js';

function stubs(json: unknown) {
  const r = parseStubDomains(JSON.stringify(json));
  assert.ok(r.ok);
  return r.value;
}

test('cluster names resolve through kube-dns (keeping their port), other names through the system resolver', async (t) => {
  const kubedns = await startTestDnsServer({
    handler: (q) =>
      q.name === 'dns-stub.infra.svc.cluster.local' && q.type === 'A'
        ? { answers: [{ name: q.name, type: 'A', ttl: 30, data: '10.96.0.53' }] }
        : q.name === 'v6only.infra.svc.cluster.local' && q.type === 'AAAA'
          ? { answers: [{ name: q.name, type: 'AAAA', ttl: 30, data: 'fd00::53' }] }
          : q.name === 'v6only.infra.svc.cluster.local'
            ? {}
            : { rcode: 'NXDOMAIN' },
  });
  t.after(() => kubedns.close());
  const systemAsked: string[] = [];
  const r = await resolveStubDomains(
    stubs({
      'corp.example': ['dns-stub.infra.svc.cluster.local:5353', 'v6only.infra.svc.cluster.local', 'localhost'],
      'gone.example': ['missing.infra.svc.cluster.local'],
    }),
    {
      kubednsServer: { host: kubedns.host, port: kubedns.port },
      clusterDomain: 'cluster.local',
      log: silentLogger(),
      systemLookup: async (n) => (systemAsked.push(n), '127.0.0.1'),
    },
  );
  assert.deepEqual(r.stubDomains.get('corp.example'), [
    { ip: '10.96.0.53', port: 5353, portGiven: true },
    { ip: 'fd00::53', port: 53, portGiven: false },
    { ip: '127.0.0.1', port: 53, portGiven: false },
  ]);
  assert.deepEqual(systemAsked, ['localhost'], 'cluster names never go to the system resolver');
  assert.equal(r.stubDomains.has('gone.example'), false, 'no line without a usable server');
  assert.equal(r.failures.length, 1);
  assert.match(r.failures[0]!, /^gone\.example: missing\.infra\.svc\.cluster\.local \(.*NXDOMAIN/);
});

test('kube-dns not answering: the name is reported and left out, not written as an unusable line', async () => {
  const r = await resolveStubDomains(stubs({ 'a.example': ['x.svc.cluster.local', '192.0.2.1'] }), {
    kubednsServer: { host: '127.0.0.1', port: 9 },
    clusterDomain: 'cluster.local',
    log: silentLogger(),
    timeoutMs: 200,
  });
  assert.deepEqual(r.stubDomains.get('a.example'), [{ ip: '192.0.2.1', port: 53, portGiven: false }]);
  assert.equal(r.failures.length, 1);
});

test('a name that resolved before keeps its last address while kube-dns does not answer', async () => {
  const r = await resolveStubDomains(stubs({ 'a.example': ['x.svc.cluster.local:5353'], 'b.example': ['new.svc.cluster.local'] }), {
    kubednsServer: { host: '127.0.0.1', port: 9 },
    clusterDomain: 'cluster.local',
    log: silentLogger(),
    timeoutMs: 200,
    lastKnown: new Map([['x.svc.cluster.local', '10.96.0.53']]),
  });
  assert.deepEqual(r.stubDomains.get('a.example'), [{ ip: '10.96.0.53', port: 5353, portGiven: true }]);
  assert.equal(r.stubDomains.has('b.example'), false, 'a name never resolved is still left out');
  assert.equal(r.failures.length, 2, 'both reported: the caller keeps retrying');
  assert.deepEqual([...r.addresses], [['x.svc.cluster.local', '10.96.0.53']]);
});

test('a name whose answers rotate (a headless Service, a round-robin record) keeps one address from refresh to refresh', async (t) => {
  let asked = 0;
  const kubedns = await startTestDnsServer({
    handler: (q) => {
      const ips = ['10.96.0.54', '10.96.0.53', '10.96.0.55'];
      for (let i = 0; i < asked % 3; i++) ips.push(ips.shift()!); // each answer rotated by one
      asked++;
      return q.type === 'A' ? { answers: ips.map((data) => ({ name: q.name, type: 'A' as const, ttl: 0, data })) } : {};
    },
  });
  t.after(() => kubedns.close());
  let turn = 0;
  const system = ['192.0.2.9', '192.0.2.7', '192.0.2.8'];
  const opts = {
    kubednsServer: { host: kubedns.host, port: kubedns.port },
    clusterDomain: 'cluster.local',
    log: silentLogger(),
    systemLookup: async () => system.slice(turn % 3).concat(system.slice(0, turn % 3)),
  };
  const domains = stubs({ 'a.example': ['ns.infra.svc.cluster.local'], 'b.example': ['ns.corp.example'] });
  let last: ReadonlyMap<string, string> | undefined;
  const seen: string[] = [];
  for (turn = 0; turn < 6; turn++) {
    const r = await resolveStubDomains(domains, { ...opts, ...(last && { lastKnown: last }) });
    seen.push(`${r.stubDomains.get('a.example')![0]!.ip} ${r.stubDomains.get('b.example')![0]!.ip}`);
    last = r.addresses;
  }
  assert.deepEqual(new Set(seen), new Set(['10.96.0.53 192.0.2.7']), 'the lowest address, then the same one every time');
  // the kept address leaves the answers: the lowest of the new ones
  const moved = await resolveStubDomains(domains, { ...opts, systemLookup: async () => ['192.0.2.30', '192.0.2.20'], lastKnown: last! });
  assert.equal(moved.stubDomains.get('b.example')![0]!.ip, '192.0.2.20');
  // and an address still answered stays, though it is not the lowest
  const kept = await resolveStubDomains(domains, { ...opts, systemLookup: async () => ['192.0.2.1', '192.0.2.30'], lastKnown: new Map([['ns.corp.example', '192.0.2.30']]) });
  assert.equal(kept.stubDomains.get('b.example')![0]!.ip, '192.0.2.30');
});

test('cluster names are those under the configured cluster domain', () => {
  assert.equal(isClusterName('kubernetes.default.svc.cluster.local', 'cluster.local'), true);
  assert.equal(isClusterName('cluster.local.', 'cluster.local'), true);
  assert.equal(isClusterName('notcluster.local', 'cluster.local'), false);
  assert.equal(isClusterName('a.svc.k8s.example', 'k8s.example'), true);
});
