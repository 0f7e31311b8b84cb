// What a cluster gives the kube-dns pod, for images-e2e.test.ts: the fake API server (HTTPS, as a
// real one; its CA and token become the pod's service account files), a stand-in upstream
// resolver and two stub-domain servers. The test starts this process inside the pod's network
// namespace (nsenter), so the pod reaches all of them on 127.0.0.1 and nothing leaves loopback.
//
// Protocol: one JSON line on stdout once everything listens ({ api: {port, token, caPem}, upstream,
// stub, stub2 }); then one JSON command per stdin line ({ op: 'upsert', resource, obj }), each
// answered with { ok: true } or { error }. Stdin closing stops everything.
import { createInterface } from 'node:readline';
import { readFileSync } from 'node:fs';
import {
  clusterIPService, endpointSlice, externalNameService, headlessService, startFakeApiServer, startTestDnsServer, type ResourceName,
} from '../src/index.js';

const api = await startFakeApiServer({ tls: true });
api.upsert('services', clusterIPService('default', 'kubernetes', ['10.96.0.1'], [{ name: 'https', port: 443 }]));
api.upsert('services', clusterIPService('shop', 'frontend', ['10.96.12.7'], [{ name: 'http', port: 80 }]));
api.upsert('services', headlessService('shop', 'db', [{ name: 'postgres', port: 5432 }]));
api.upsert('endpointslices', endpointSlice('shop', 'db', 'db-abcde', 'IPv4', [{ ip: '10.244.1.5', hostname: 'db-0' }, { ip: '10.244.2.9', hostname: 'db-1' }], [{ name: 'postgres', port: 5432 }]));
api.upsert('services', externalNameService('shop', 'payments', 'api.payments.example.com'));

const upstream = await startTestDnsServer({ answerIp: '192.0.2.80' });
const stub = await startTestDnsServer({ answerIp: '10.10.0.53' });
const stub2 = await startTestDnsServer({ answerIp: '10.10.0.54' });

// The CA the kubeconfig carries is the server's self-signed certificate.
const kubeconfig = JSON.parse(readFileSync(api.kubeconfigPath, 'utf8')) as { clusters: { cluster: { 'certificate-authority-data': string } }[] };
const caPem = Buffer.from(kubeconfig.clusters[0]!.cluster['certificate-authority-data'], 'base64').toString('utf8');

process.stdout.write(`${JSON.stringify({ api: { port: api.port, token: api.token, caPem }, upstream: upstream.port, stub: stub.port, stub2: stub2.port })}\n`);

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  try {
    const cmd = JSON.parse(line) as { op: string; resource: ResourceName; obj: object };
    if (cmd.op !== 'upsert') throw new Error(`unknown op ${cmd.op}`);
    api.upsert(cmd.resource, cmd.obj);
    process.stdout.write(`${JSON.stringify({ ok: true })}\n`);
  } catch (e) {
    process.stdout.write(`${JSON.stringify({ error: (e as Error).message })}\n`);
  }
});
lines.on('close', () => {
  void Promise.allSettled([api.close(), upstream.close(), stub.close(), stub2.close()]).then(() => process.exit(0));
});
