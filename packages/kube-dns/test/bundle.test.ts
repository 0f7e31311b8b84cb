// The production bundles (scripts/bundle.mjs, docs/footprint.md): what the images ship runs on
// its own, and carries only the client-node models kube-dns reads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const ROOT = new URL('../../../../', import.meta.url).pathname;
const run = promisify(execFile);
const bundlePath = (pkg: string) => join(ROOT, 'packages', pkg, 'bundle', `${pkg}.cjs`);
const lazyPath = (pkg: string) => join(ROOT, 'packages', pkg, 'bundle', `${pkg}.lazy.cjs`);

/** Runs the launcher once, which (re)builds a missing or stale bundle in a checkout. */
async function ensureBundle(pkg: string): Promise<void> {
  await run(process.execPath, [join(ROOT, 'packages', pkg, 'bin', `${pkg}.js`), pkg === 'dnsmasq-nanny' ? '-help' : '--help'], { timeout: 120_000 });
}

for (const [pkg, help, version] of [
  ['kube-dns', '--help', '--version'],
  ['sidecar', '--help', '--version'],
  ['dnsmasq-nanny', '-help', undefined],
] as const) {
  test(`${pkg}: the bundle runs with plain node in a directory without node_modules`, async (t) => {
    await ensureBundle(pkg);
    const dir = await mkdtemp(join(tmpdir(), 'bundle-alone-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const alone = join(dir, `${pkg}.cjs`);
    await copyFile(bundlePath(pkg), alone);
    await copyFile(lazyPath(pkg), join(dir, `${pkg}.lazy.cjs`));
    const h = await run(process.execPath, [alone, help], { cwd: dir, timeout: 30_000 });
    assert.match(h.stdout, new RegExp(`^Usage of ${pkg}:`));
    if (version) {
      const pkgJson = JSON.parse(await readFile(join(ROOT, 'packages', pkg, 'package.json'), 'utf8')) as { version: string };
      const v = await run(process.execPath, [alone, version], { cwd: dir, timeout: 30_000, env: { ...process.env, KUBE_DNS_VERSION: '' } });
      assert.equal(v.stdout, `Kube-DNS ${pkgJson.version}\n`);
    }
    // a bad flag still fails as the binary does
    await assert.rejects(run(process.execPath, [alone, '--no-such-flag=1'], { cwd: dir, timeout: 30_000 }), (e: { code?: number }) => e.code === 2);
  });
}

test('kube-dns bundle: the client-node models it deserializes and the API methods it calls are in, the hundreds of others are not', async () => {
  await ensureBundle('kube-dns');
  const src = await readFile(bundlePath('kube-dns'), 'utf8');
  const has = (model: string) => new RegExp(`\\bclass _${model}\\b`).test(src);
  for (const needed of ['V1ServiceList', 'V1ServiceSpec', 'V1EndpointSliceList', 'V1Endpoint', 'V1PodList', 'V1ObjectMeta', 'V1Status']) {
    assert.ok(has(needed), `${needed} is in the bundle`);
  }
  for (const unused of ['V1Deployment', 'V1CustomResourceDefinition', 'V1CertificateSigningRequest', 'V1Ingress', 'V1StorageClass']) {
    assert.ok(!has(unused), `${unused} is not in the bundle`);
  }
  const models = src.match(/\bstatic getAttributeTypeMap\(\)/g)?.length ?? 0;
  assert.ok(models > 50 && models < 300, `${models} models in the bundle (client-node has over 700)`);
  // of client-node's generated API classes, only the methods something calls by name (about
  // 900 KB of source otherwise, kept in the heap for the life of the process)
  for (const method of ['listServiceForAllNamespaces', 'listNamespacedEndpointSlice', 'listPodForAllNamespaces', 'listNamespace']) {
    assert.ok(src.includes(`async ${method}(`), `${method} is in the bundle`);
  }
  for (const method of ['connectDeleteNamespacedPodProxy', 'createNamespacedService', 'patchNamespacedPodStatus', 'readNodeStatus']) {
    assert.ok(!src.includes(`${method}(`), `${method} is not in the bundle`);
  }
  // whatwg-url's URL parser (and with it tr46's Unicode table) is left out: node-fetch uses Node's URL
  assert.ok(!src.includes('"scheme start"'), "whatwg-url's URL parser is not in the bundle");
});

const keys0 = (src: string) => [...src.matchAll(/lazySide\[("[^"]+")\]\(\)/g)].map((m) => JSON.parse(m[1]!) as string);

test('the modules held back until first use: each one the bundles ask for is in the side file and loads on its own', async (t) => {
  const asked = new Map<string, string[]>();
  for (const pkg of ['kube-dns', 'sidecar', 'dnsmasq-nanny']) {
    await ensureBundle(pkg);
    const src = await readFile(bundlePath(pkg), 'utf8');
    // each stand-in requires ./<pkg>.lazy.cjs (with a message naming it when it is missing) and
    // calls its entry: lazySide["<module>"]() (scripts/bundle.mjs)
    assert.equal(src.includes(`require("./${pkg}.lazy.cjs")`), keys0(src).length > 0, `${pkg}: the stand-ins require ${pkg}.lazy.cjs`);
    const keys = keys0(src);
    asked.set(pkg, keys);
    // what they weigh stays out of the bundle the process reads at start
    if (keys.length > 0) assert.ok(!src.includes('"application/vnd.'), `${pkg}: mime-db's table is not in the bundle`);
  }
  // express and prom-client (kube-dns and the sidecar) hold back what serves no endpoint of ours;
  // client-node (kube-dns) its auth providers and proxies; the nanny has neither
  const common = [
    'node_modules/@opentelemetry/api/dist/index.cjs',
    'node_modules/accepts/index.js',
    'node_modules/body-parser/lib/read.js',
    'node_modules/content-disposition/dist/index.js',
    'node_modules/mime-types/index.js',
    'node_modules/prom-client/lib/cluster.js',
    'node_modules/prom-client/lib/defaultMetrics.js',
    'node_modules/prom-client/lib/pushgateway.js',
    'node_modules/prom-client/lib/timeWindowQuantiles.js',
    'node_modules/qs/lib/index.js',
    'node_modules/range-parser/index.js',
    'node_modules/send/index.js',
    'node_modules/serve-static/index.js',
    'node_modules/type-is/index.js',
  ];
  const clientNode = ['node_modules/hpagent/index.mjs', 'node_modules/jsonpath-plus/dist/index-node-esm.js', 'node_modules/openid-client/build/index.js', 'node_modules/socks-proxy-agent/dist/index.js'];
  assert.deepEqual([...asked.get('sidecar')!].sort(), common);
  assert.deepEqual([...asked.get('kube-dns')!].sort(), [...common, ...clientNode].sort());
  assert.deepEqual(asked.get('dnsmasq-nanny'), []);
  // copied alone (no node_modules), each entry loads and does its job
  const dir = await mkdtemp(join(tmpdir(), 'bundle-lazy-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  for (const pkg of ['kube-dns', 'sidecar']) {
    await copyFile(lazyPath(pkg), join(dir, `${pkg}.lazy.cjs`));
    const probe = `const m = require('./${pkg}.lazy.cjs');
      const get = (k) => m['node_modules/' + k]();
      const out = [
        get('mime-types/index.js').lookup('x.json'),
        typeof get('body-parser/lib/read.js'),
        typeof get('prom-client/lib/pushgateway.js').prototype.pushAdd,
        get('qs/lib/index.js').stringify({ a: [1, 2] }, { encode: false }),
        get('accepts/index.js')({ headers: { accept: 'text/plain' } }).type(['json', 'text']),
        get('type-is/index.js').is('application/json', ['json']),
        get('range-parser/index.js')(100, 'bytes=0-9')[0].end,
        get('content-disposition/dist/index.js').create('a.txt'),
        typeof get('send/index.js'),
        typeof get('serve-static/index.js'),
        typeof get('prom-client/lib/timeWindowQuantiles.js'),
        get('prom-client/lib/defaultMetrics.js').metricsList.includes('processCpuTotal'),
        typeof get('prom-client/lib/cluster.js').aggregate,
        typeof get('@opentelemetry/api/dist/index.cjs').trace.getSpan,
      ];
      if (m['node_modules/openid-client/build/index.js']) {
        out.push(get('jsonpath-plus/dist/index-node-esm.js').JSONPath({ path: '$.a', json: { a: 7 }, wrap: false }));
        out.push(typeof get('openid-client/build/index.js').discovery, typeof get('socks-proxy-agent/dist/index.js').SocksProxyAgent);
        out.push(typeof get('hpagent/index.mjs').HttpProxyAgent, typeof get('hpagent/index.mjs').HttpsProxyAgent);
      }
      process.stdout.write(JSON.stringify(out));`;
    const r = await run(process.execPath, ['-e', probe], { cwd: dir, timeout: 30_000 });
    const expected = ['application/json', 'function', 'function', 'a[0]=1&a[1]=2', 'text', 'json', 9, 'attachment; filename=a.txt', 'function', 'function', 'function', true, 'function', 'function'];
    if (pkg === 'kube-dns') expected.push(7, 'function', 'function', 'function', 'function');
    assert.deepEqual(JSON.parse(r.stdout), expected, pkg);
  }
});
