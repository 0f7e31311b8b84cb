// The kube-dns binary as an operator runs it: flags, --version, exit codes, SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { datas, query } from '@kube-dns/dns-client';
import { WARNING_CODE, clusterIPService, endpointSlice, freePort, headlessService, namespaceObject, pod, startFakeApiServer, startTestDnsServer, warningEmitter, warningProblems } from '@kube-dns/testkit';

import { parseOptions } from '../src/options.js';

const BIN = fileURLToPath(new URL('../../bin/kube-dns.js', import.meta.url));

function run(args: string[], env: Record<string, string> = {}) {
  const p = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  p.stdout.on('data', (d) => (stdout += d));
  p.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => p.on('exit', (code) => resolve(code)));
  return { p, exited, out: () => stdout, err: () => stderr };
}

/** The binary serving on free loopback ports against a kubeconfig. */
async function runServing(kubeconfig: string, extra: string[]) {
  const [dnsPort, healthzPort] = [await freePort(), await freePort()];
  const r = run([
    '--dns-bind-address=127.0.0.1',
    `--dns-port=${dnsPort}`,
    '--healthz-bind-address=127.0.0.1',
    `--healthz-port=${healthzPort}`,
    `--kubecfg-file=${kubeconfig}`,
    ...extra,
  ]);
  return { r, dnsPort, healthzPort };
}

test('--version prints the version; the original manifest flags parse', async () => {
  const r = run(['--domain=cluster.local.', '--dns-port=10053', '--config-dir=/kube-dns-config', '--v=2', '-v2', '-v', '2', '--logtostderr', '--version']);
  assert.equal(await r.exited, 0);
  assert.match(r.out(), /^Kube-DNS \d+\.\d+\.\d+/);
  const raw = run(['--version=raw']);
  assert.equal(await raw.exited, 0);
  assert.match(raw.out(), /^"\d+\.\d+\.\d+.*"\n$/);
});

test('--federations is validated as the original did, then ignored with a warning', async () => {
  const bad = run(['--federations=!!bad']);
  assert.equal(await bad.exited, 2);
  assert.match(bad.err(), /--federations=!!bad: "!!bad" is not name=domain/);
  assert.equal(parseOptions(['--federations=myfed=example.com']).federationsGiven, true);
  assert.equal(parseOptions([]).federationsGiven, false);
  const good = run(['--federations=myfed=example.com', '--dns-port=0', '--healthz-port=0', '--kube-master-url=http://127.0.0.1:1', '--dns-bind-address=127.0.0.1', '--healthz-bind-address=127.0.0.1']);
  const deadline = Date.now() + 30_000;
  while (!/--federations is obsolete/.test(good.err())) {
    assert.ok(Date.now() < deadline && good.p.exitCode === null, good.err().slice(-1000));
    await new Promise((res) => setTimeout(res, 100));
  }
  good.p.kill('SIGKILL');
});

test('--version takes a Go boolean as the original: =false runs the server, a bad value is a flag error', async (t) => {
  for (const arg of ['--version=true', '--version=1', '--version=T']) {
    const r = run([arg]);
    assert.equal(await r.exited, 0, arg);
    assert.match(r.out(), /^Kube-DNS \d+/, arg);
  }
  const bad = run(['--version=yes']);
  assert.equal(await bad.exited, 2);
  assert.match(bad.err(), /invalid value "yes" for --version: want true, false or raw/);
  const api = await startFakeApiServer();
  t.after(() => api.close());
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1']));
  for (const arg of ['--version=false', '--version=0']) {
    // no version printed: kube-dns starts and serves
    const { r, dnsPort } = await runServing(api.kubeconfigPath, [arg, '--nameservers=127.0.0.1:9']);
    t.after(() => r.p.kill('SIGKILL'));
    const deadline = Date.now() + 20_000;
    let answers: string[] = [];
    while (answers.length === 0) {
      assert.ok(Date.now() < deadline && r.p.exitCode === null, `${arg}: not serving; exit ${r.p.exitCode}, stdout ${JSON.stringify(r.out())}`);
      await new Promise((done) => setTimeout(done, 100));
      const reply = await query({ host: '127.0.0.1', port: dnsPort }, { name: 'kubernetes.default.svc.cluster.local', type: 'A', timeoutMs: 500 }).catch(() => undefined);
      answers = reply ? datas(reply.packet.answers) : [];
    }
    assert.deepEqual(answers, ['10.0.0.1'], arg);
    assert.doesNotMatch(r.out(), /Kube-DNS/, arg);
    r.p.kill('SIGKILL');
  }
});

test('bad flags exit 2 with a message naming the flag', async () => {
  for (const [args, re] of [
    [['--no-such-flag'], /unknown flag: --no-such-flag/],
    [['--domain=bad_domain!'], /--domain/],
    [['--dns-port=70000'], /--dns-port/],
    [['--pods=maybe'], /--pods/],
    [['--nameservers=1.2.3.4:99999'], /--nameservers/],
    [['--kube-master-url=::nope'], /--kube-master-url/],
    [['--config-map=kube-dns', '--config-dir=/x'], /both --config-map and --config-dir/],
  ] as const) {
    const r = run([...args]);
    assert.equal(await r.exited, 2, `${args.join(' ')}: ${r.err()}`);
    assert.match(r.err(), re);
  }
});

test('PROMETHEUS_PORT that is not a port (the tcp://ip:port Kubernetes injects for a Service named prometheus): DNS runs, without a metrics listener, and says so', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1']));
  const [dnsPort, healthzPort] = [await freePort(), await freePort()];
  const r = run(
    ['--dns-bind-address=127.0.0.1', `--dns-port=${dnsPort}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthzPort}`, `--kubecfg-file=${api.kubeconfigPath}`],
    { PROMETHEUS_PORT: 'tcp://10.0.0.5:9090' },
  );
  t.after(() => r.p.kill('SIGKILL'));
  const deadline = Date.now() + 30_000;
  while ((await fetch(`http://127.0.0.1:${healthzPort}/readiness`).then((x) => x.status, () => 0)) !== 200) {
    assert.equal(r.p.exitCode, null, `exited: ${r.err().slice(-1000)}`);
    assert.ok(Date.now() < deadline, 'ready');
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.deepEqual(datas((await query({ host: '127.0.0.1', port: dnsPort }, { name: 'kubernetes.default.svc.cluster.local', type: 'A' })).packet.answers), ['10.0.0.1']);
  assert.match(r.err(), /PROMETHEUS_PORT is not a port number: no metrics listener/);
});

test('PROMETHEUS_PATH, _NAMESPACE and _SUBSYSTEM as the original: a path is served, an empty value is the default, a bad name stops the start', async (t) => {
  for (const [name, value, re] of [
    ['PROMETHEUS_NAMESPACE', 'kube-dns', /PROMETHEUS_NAMESPACE=kube-dns: not a Prometheus metric name part/],
    ['PROMETHEUS_SUBSYSTEM', '1x', /PROMETHEUS_SUBSYSTEM=1x: not a Prometheus metric name part/],
    ['PROMETHEUS_PATH', 'metrics', /PROMETHEUS_PATH=metrics: not a URL path/],
  ] as const) {
    const r = run(['--dns-port=0'], { [name]: value });
    assert.equal(await r.exited, 2, `${name}=${value}: ${r.err()}`);
    assert.match(r.err(), re);
  }
  const api = await startFakeApiServer();
  t.after(() => api.close());
  const [dnsPort, healthzPort] = [await freePort(), await freePort()];
  const r = run(['--dns-bind-address=127.0.0.1', `--dns-port=${dnsPort}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthzPort}`, `--kubecfg-file=${api.kubeconfigPath}`], {
    PROMETHEUS_PATH: '/custom-metrics',
    PROMETHEUS_NAMESPACE: '',
    PROMETHEUS_SUBSYSTEM: 'dns',
  });
  t.after(() => r.p.kill('SIGKILL'));
  const deadline = Date.now() + 30_000;
  let res: Response | undefined;
  while (!res || res.status !== 200) {
    assert.ok(Date.now() < deadline, `no metrics on /custom-metrics: ${r.err().slice(-1000)}`);
    await new Promise((done) => setTimeout(done, 100));
    res = await fetch(`http://127.0.0.1:${healthzPort}/custom-metrics`).catch(() => undefined);
  }
  await query({ host: '127.0.0.1', port: dnsPort }, { name: 'kubernetes.default.svc.cluster.local', type: 'A' });
  const body = await (await fetch(`http://127.0.0.1:${healthzPort}/custom-metrics`)).text();
  // an empty namespace is the default (skydns), never a name starting with "_"
  assert.match(body, /^skydns_dns_dns_request_count_total\{/m, 'namespace skydns (the default), subsystem dns');
  assert.doesNotMatch(body, /^_/m);
  assert.equal((await fetch(`http://127.0.0.1:${healthzPort}/metrics`)).status, 404, 'served where PROMETHEUS_PATH says, only');
});

test('SIGTERM: readiness fails at once, queries keep being answered for --lameduck, then exit 0', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1']));
  // An upstream that holds its answer until told: a forwarded query is provably in flight (the
  // upstream has it, kube-dns has not answered) when SIGTERM arrives, and is answered only after
  // kube-dns has started stopping.
  let received!: () => void;
  const upstreamHasIt = new Promise<void>((r) => (received = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const slow = await startTestDnsServer({
    handler: async (q) => {
      if (q.name === 'slow.example') {
        received();
        await released;
      }
      return { answers: [{ name: q.name, type: 'A', ttl: 5, data: '192.0.2.1' }] };
    },
  });
  t.after(() => slow.close());
  const { r, dnsPort, healthzPort } = await runServing(api.kubeconfigPath, [`--nameservers=127.0.0.1:${slow.port}`, '--lameduck=2s']);
  t.after(() => r.p.kill('SIGKILL'));
  const server = { host: '127.0.0.1', port: dnsPort };
  // generous: a loaded CI machine takes seconds to start a node process
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ok = await query(server, { name: 'kubernetes.default.svc.cluster.local', type: 'A', timeoutMs: 500 }).then(
      (x) => x.packet.rcode === 'NOERROR',
      () => false,
    );
    if (ok) break;
    assert.ok(Date.now() < deadline, `kube-dns did not become ready: ${r.err()}`);
    await new Promise((res) => setTimeout(res, 100));
  }
  const ready = await fetch(`http://127.0.0.1:${healthzPort}/readiness`);
  assert.equal(ready.status, 200);
  const inflight = query(server, { name: 'slow.example', type: 'A', timeoutMs: 20_000 });
  await upstreamHasIt;
  const t0 = Date.now();
  r.p.kill('SIGTERM');
  const waitLog = async (re: RegExp, what: string) => {
    const deadline = Date.now() + 15_000;
    while (!re.test(r.err())) {
      assert.ok(Date.now() < deadline, `no '${what}' log line after SIGTERM: ${r.err().slice(-2000)}`);
      await new Promise((res) => setTimeout(res, 10));
    }
  };
  // lameduck: not ready, yet answering new queries, while the forwarded one is still held upstream
  await waitLog(/lameduck: \/readiness fails/, 'lameduck');
  assert.equal((await fetch(`http://127.0.0.1:${healthzPort}/readiness`)).status, 503);
  const during = await query(server, { name: 'kubernetes.default.svc.cluster.local', type: 'A', timeoutMs: 2000 });
  assert.deepEqual(datas(during.packet.answers), ['10.0.0.1']);
  // the query that was in flight at SIGTERM is answered (the upstream lets it go now, well within
  // the forwarding timeout), then the period ends
  release();
  const reply = await inflight;
  assert.deepEqual(datas(reply.packet.answers), ['192.0.2.1'], 'the query in flight was answered');
  await waitLog(/stopping: no new queries, answering those in flight/, 'stopping');
  assert.equal(await r.exited, 0);
  assert.ok(Date.now() - t0 >= 2000, 'not before the lameduck period ended');
  // generous: the hard stop is 5 s after the period; a loaded machine adds to it
  assert.ok(Date.now() - t0 < 15_000, `exited ${Date.now() - t0} ms after SIGTERM`);
  // and it no longer listens
  await assert.rejects(query(server, { name: 'kubernetes.default.svc.cluster.local', type: 'A', timeoutMs: 300, transport: 'tcp' }));
});

test('a duration past what a timer holds (1000h), or an --initial-sync-timeout of 0, is never: not a timer firing every millisecond', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  await api.faults.pause(); // no initial sync: the reminder's timer is what runs
  for (const extra of [['--initial-sync-timeout=1000h', '--config-period=1000h'], ['--initial-sync-timeout=0s']]) {
    const { r, healthzPort } = await runServing(api.kubeconfigPath, extra);
    t.after(() => r.p.kill('SIGKILL'));
    const deadline = Date.now() + 30_000;
    while ((await fetch(`http://127.0.0.1:${healthzPort}/healthz`).then((x) => x.status, () => 0)) === 0) {
      assert.ok(Date.now() < deadline, `not serving: ${r.err().slice(-2000)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    await new Promise((res) => setTimeout(res, 1500));
    const reminders = (r.err().match(/still no initial sync/g) ?? []).length;
    assert.equal(reminders, 0, `${extra.join(' ')}: ${reminders} reminders in 1.5 s`);
    assert.doesNotMatch(r.err(), /TimeoutOverflowWarning/, extra.join(' '));
    r.p.kill('SIGKILL');
  }
});

test('no API server at start: it logs loudly after --initial-sync-timeout, keeps running and trying, then becomes ready', async (t) => {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  api.upsert('services', clusterIPService('default', 'kubernetes', ['10.0.0.1']));
  await api.faults.pause();
  const { r, dnsPort, healthzPort } = await runServing(api.kubeconfigPath, ['--initial-sync-timeout=300ms']);
  t.after(() => r.p.kill('SIGKILL'));
  const deadline = Date.now() + 30_000; // generous: a loaded machine takes seconds to start a node process
  while (!/still no initial sync with the API server/.test(r.err())) {
    assert.ok(Date.now() < deadline, `no loud log line: ${r.err().slice(-2000)}`);
    assert.equal(r.p.exitCode, null, 'the original exits here; we keep trying');
    await new Promise((res) => setTimeout(res, 100));
  }
  assert.match(r.err(), /"level":50/, 'logged at error level');
  assert.match(r.err(), /"pending":"[^"]*services not listed/, 'the line says what is still missing');
  assert.equal((await fetch(`http://127.0.0.1:${healthzPort}/readiness`)).status, 503);
  const early = await query({ host: '127.0.0.1', port: dnsPort }, { name: 'kubernetes.default.svc.cluster.local', type: 'A' });
  assert.equal(early.packet.rcode, 'SERVFAIL');
  await api.faults.resume();
  const until = Date.now() + 30_000;
  for (;;) {
    if ((await fetch(`http://127.0.0.1:${healthzPort}/readiness`)).status === 200) break;
    assert.ok(Date.now() < until, 'ready once the API server is back');
    await new Promise((res) => setTimeout(res, 100));
  }
  const after = await query({ host: '127.0.0.1', port: dnsPort }, { name: 'kubernetes.default.svc.cluster.local', type: 'A' });
  assert.deepEqual(datas(after.packet.answers), ['10.0.0.1']);
});

test('every list call the shipped binary can make reaches the API server: cluster-wide and per namespace, Services, EndpointSlices, Pods, Namespaces (past their first page)', async (t) => {
  // the bundle keeps only the methods of client-node's generated API classes that something calls
  // by name (scripts/bundle.mjs): each list the binary makes is exercised here, on what ships
  const api = await startFakeApiServer();
  t.after(() => api.close());
  api.upsert('services', clusterIPService('team-a', 'web', ['10.3.0.1']));
  api.upsert('services', headlessService('team-a', 'db'));
  api.upsert('endpointslices', endpointSlice('team-a', 'db', 'db-1', 'IPv4', [{ ip: '10.4.0.7' }]));
  api.upsert('pods', pod('team-a', 'client', ['10.5.0.9']));
  // team-a after 600 others: on the second page of the Namespace list (500 a page), which the
  // bundle once never read (its type map lacked V1NamespaceList, so the continue token was lost)
  for (let i = 0; i < 600; i++) api.upsert('namespaces', namespaceObject(`filler-${i}`, { dns: 'on' }));
  api.upsert('namespaces', namespaceObject('team-a', { dns: 'on' }));
  for (const selection of ['--namespaces=team-a', '--namespace-labels=dns=on']) {
    const { r, dnsPort } = await runServing(api.kubeconfigPath, [selection, '--pods=verified']);
    t.after(() => r.p.kill('SIGKILL'));
    const server = { host: '127.0.0.1', port: dnsPort };
    const answer = async (name: string) => {
      const x = await query(server, { name, type: 'A', timeoutMs: 500 }).catch(() => undefined);
      return x?.packet.rcode === 'NOERROR' ? datas(x.packet.answers) : [];
    };
    const deadline = Date.now() + 20_000; // generous: a loaded CI machine takes seconds to start node
    while ((await answer('web.team-a.svc.cluster.local')).length === 0) {
      assert.ok(Date.now() < deadline, `${selection}: never answered for the Service: ${r.err().slice(-2000)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.deepEqual(await answer('db.team-a.svc.cluster.local'), ['10.4.0.7'], `${selection}: the EndpointSlice was listed`);
    assert.deepEqual(await answer('10-5-0-9.team-a.pod.cluster.local'), ['10.5.0.9'], `${selection}: the Pod was listed`);
    assert.doesNotMatch(r.err(), /is not a function/);
    r.p.kill('SIGKILL');
    await r.exited;
  }
});

test('node\'s process warnings come out as JSON log lines: a deprecation at debug, any other warning at warn', async (t) => {
  // on the images' Node a bundled dependency's url.parse() prints a plain-text deprecation at
  // every start, which stops a JSON log pipeline
  const api = await startFakeApiServer();
  t.after(() => api.close());
  const w = await warningEmitter();
  t.after(w.cleanup);
  const [dnsPort, healthzPort] = [await freePort(), await freePort()];
  const r = run(['--dns-bind-address=127.0.0.1', `--dns-port=${dnsPort}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthzPort}`, `--kubecfg-file=${api.kubeconfigPath}`], w.env);
  t.after(() => r.p.kill('SIGKILL'));
  const deadline = Date.now() + 20_000;
  while (!r.err().includes(WARNING_CODE)) {
    assert.ok(Date.now() < deadline && r.p.exitCode === null, `no warning logged: ${r.err().slice(-2000)}`);
    await new Promise((res) => setTimeout(res, 100));
  }
  await new Promise((res) => setTimeout(res, 200)); // both warnings' lines
  r.p.kill('SIGKILL');
  await r.exited;
  assert.deepEqual(warningProblems(r.err()), []);
});
