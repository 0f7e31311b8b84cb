import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { silentLogger } from '@kube-dns/config';
import { clusterIPService, startFakeApiServer, tempDir } from '@kube-dns/testkit';
import { expandEnv, KubeConfigError, KubeSync, loadKubeConfig, parseMasterUrl } from '../src/kube/index.js';
import { RecordingZone, waitUntil } from './kube-helpers.js';

test('--kubecfg-file: the file\'s current context is used, and its credentials work', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  const kc = loadKubeConfig({ kubecfgFile: api.kubeconfigPath });
  assert.equal(kc.getCurrentCluster()?.server, api.url);
  const list = await kc.makeApiClient(CoreV1Api).listServiceForAllNamespaces();
  assert.deepEqual(list.items, []);
});

test('--kube-master-url overrides the kubeconfig server and keeps its credentials', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  const kc = loadKubeConfig({ kubecfgFile: api.kubeconfigPath, masterUrl: `http://127.0.0.1:${api.port}/` });
  assert.equal(kc.getCurrentCluster()?.server, `http://127.0.0.1:${api.port}`);
  assert.equal(kc.getCurrentUser()?.token, api.token);
  await kc.makeApiClient(CoreV1Api).listServiceForAllNamespaces();
});

test('--kubecfg-file whose user has a tokenFile (relative): kube-dns gets ready, and follows the file as it rotates', async (t) => {
  // client-node 1.4 ignores users[].user.tokenFile; client-go reads it and re-reads it
  const api = await startFakeApiServer({ token: 'token-1' });
  t.after(() => api.close());
  const dir = await tempDir();
  t.after(dir.cleanup);
  await mkdir(join(dir.path, 'secrets'));
  const putToken = async (text: string) => {
    await writeFile(join(dir.path, 'secrets/.token.tmp'), text);
    await rename(join(dir.path, 'secrets/.token.tmp'), join(dir.path, 'secrets/token'));
  };
  await putToken('token-1\n');
  const kubecfgFile = join(dir.path, 'kubeconfig');
  await writeFile(
    kubecfgFile,
    `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "${api.url}", insecure-skip-tls-verify: true}
users:
- name: u
  user: {tokenFile: secrets/token}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`,
  );
  api.upsert('services', clusterIPService('ns', 'a', ['10.0.0.1']));
  const zone = new RecordingZone();
  const sync = new KubeSync({ kc: loadKubeConfig({ kubecfgFile }), zone, watchPods: false, log: silentLogger(), backoff: { initialMs: 20, maxMs: 200 } });
  t.after(() => sync.stop());
  sync.start();
  await sync.waitForSync(5000);
  assert.ok(zone.services.has('ns/a'));
  assert.deepEqual(new Set(api.requests.map((r) => r.token)), new Set(['token-1']));

  await putToken('token-2\n');
  api.faults.rotateToken('token-2');
  api.faults.dropWatches({ abrupt: true });
  api.upsert('services', clusterIPService('ns', 'b', ['10.0.0.2']));
  await waitUntil(() => zone.services.has('ns/b'), 'a change after the token file rotated', 10_000);

  // with --kube-master-url too, the token still comes from the file
  const kc = loadKubeConfig({ kubecfgFile, masterUrl: `http://127.0.0.1:${api.port}` });
  await kc.makeApiClient(CoreV1Api).listServiceForAllNamespaces();
  assert.equal(api.requests.at(-1)?.token, 'token-2');

  // a tokenFile that cannot be read fails at start, as client-go does, rather than 401 forever
  await writeFile(kubecfgFile, `clusters: [{name: c, cluster: {server: "${api.url}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {tokenFile: nope}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`);
  assert.throws(() => loadKubeConfig({ kubecfgFile }), (e: Error) => e instanceof KubeConfigError && /user "u": cannot read its tokenFile: .*nope/.test(e.message));
});

test('--kube-master-url alone: that server, no credentials; env vars are expanded', () => {
  const env = { API_HOST: '10.0.0.1', API_PORT: '8080' };
  const kc = loadKubeConfig({ masterUrl: 'http://${API_HOST}:$API_PORT', env });
  assert.equal(kc.getCurrentCluster()?.server, 'http://10.0.0.1:8080');
  assert.equal(kc.getCurrentCluster()?.skipTLSVerify, true);
  assert.equal(kc.getCurrentUser()?.token, undefined);
  const https = loadKubeConfig({ masterUrl: 'https://api.example:6443' });
  assert.equal(https.getCurrentCluster()?.skipTLSVerify, false);
  assert.equal(expandEnv('$UNSET_VAR_X-${ALSO_UNSET}', {}), '-');
});

test('a bad --kube-master-url says what is wrong', () => {
  const cases: [string, RegExp][] = [
    ['not a url', /invalid --kube-master-url "not a url": not a URL/],
    ['ftp://host', /scheme must be http or https, got "ftp"/],
    ['$NOPE', /invalid --kube-master-url "\$NOPE": not a URL \(expanded: ""\)/],
  ];
  for (const [url, re] of cases) {
    assert.throws(() => parseMasterUrl(url, {}), (e: Error) => e instanceof KubeConfigError && re.test(e.message));
    assert.throws(() => loadKubeConfig({ masterUrl: url, env: {} }), re);
  }
});

test('a missing or broken kubeconfig file names the file', async (t) => {
  const dir = await tempDir();
  t.after(dir.cleanup);
  assert.throws(() => loadKubeConfig({ kubecfgFile: join(dir.path, 'nope') }), /cannot load --kubecfg-file .*nope: ENOENT/);
  const noCtx = join(dir.path, 'empty.yaml');
  await writeFile(noCtx, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n');
  assert.throws(() => loadKubeConfig({ kubecfgFile: noCtx }), /empty\.yaml: no cluster for the current context/);
  const plain = join(dir.path, 'plain.yaml');
  await writeFile(
    plain,
    JSON.stringify({
      clusters: [{ name: 'c', cluster: { server: 'http://10.0.0.1:8080' } }],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  // a plain http server needs no TLS setting: client-go talks http to it, and so do we
  assert.equal(loadKubeConfig({ kubecfgFile: plain }).getCurrentCluster()?.server, 'http://10.0.0.1:8080');
});

test('--kubecfg-file whose server is plain http, without insecure-skip-tls-verify: its requests work, as client-go\'s did', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  api.upsert('services', clusterIPService('default', 'web', ['10.0.0.9']));
  const dir = await tempDir();
  t.after(dir.cleanup);
  const cfg = JSON.parse(await readFile(api.kubeconfigPath, 'utf8')) as { clusters: { cluster: Record<string, unknown> }[] };
  assert.match(String(cfg.clusters[0]!.cluster.server), /^http:/);
  delete cfg.clusters[0]!.cluster['insecure-skip-tls-verify'];
  const file = join(dir.path, 'kubeconfig');
  await writeFile(file, JSON.stringify(cfg));
  const list = await loadKubeConfig({ kubecfgFile: file }).makeApiClient(CoreV1Api).listServiceForAllNamespaces();
  assert.deepEqual(list.items.map((s) => s.metadata?.name), ['web']);
});

test('neither flag: the pod service account, or a clear error outside a pod', async (t) => {
  assert.throws(() => loadKubeConfig({ env: {} }), /neither --kubecfg-file nor --kube-master-url .*KUBERNETES_SERVICE_HOST/);
  const root = await tempDir();
  t.after(root.cleanup);
  const env = { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' };
  assert.throws(() => loadKubeConfig({ env, inClusterRoot: root.path }), /cannot read the service account token .*serviceaccount\/token/);
  const sa = join(root.path, 'var/run/secrets/kubernetes.io/serviceaccount');
  await mkdir(sa, { recursive: true });
  await writeFile(join(sa, 'token'), 'sa-token');
  await writeFile(join(sa, 'ca.crt'), 'not really a CA');
  const before = process.env['KUBERNETES_SERVICE_HOST'];
  const kc = loadKubeConfig({ env, inClusterRoot: root.path });
  assert.equal(kc.getCurrentCluster()?.server, 'https://[fd00::1]:443');
  assert.equal(kc.getCurrentCluster()?.caFile, join(sa, 'ca.crt'));
  assert.equal(process.env['KUBERNETES_SERVICE_HOST'], before, 'process env left as it was');
  // https whatever the port, as client-go: client-node alone picks http for 80, 8080 and 8001,
  // and then refuses every request ("HTTP protocol is not allowed when skipTLSVerify is not set")
  for (const port of ['80', '8080', '8001']) {
    const k = loadKubeConfig({ env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: port }, inClusterRoot: root.path });
    assert.equal(k.getCurrentCluster()?.server, `https://10.96.0.1:${port}`);
    assert.equal(k.getCurrentCluster()?.skipTLSVerify, false, port);
  }
});
