// The Grafana dashboard (manifests/monitoring/dashboard/kube-dns.json) against a real Prometheus
// (Debian's `prometheus`) scraping the demo pod every second: every panel query, every template
// variable and every recording rule must return data. The main graph is drawn from the same
// Prometheus (set KUBE_DNS_DASHBOARD_PNG=<file> to write it as a PNG with rsvg-convert: that is
// how the README's picture is made).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { query } from '@kube-dns/dns-client';
import { freePort } from '../src/index.js';
import { stackedAreaSvg } from './svg-chart.js';

const ROOT = new URL('../../../../', import.meta.url).pathname;
const DASHBOARD = JSON.parse(readFileSync(join(ROOT, 'manifests/monitoring/dashboard/kube-dns.json'), 'utf8')) as {
  panels: { title: string; type: string; targets: { expr: string; legendFormat?: string }[] }[];
  templating: { list: { name: string; type: string; definition?: string }[] };
};
const RULES = yaml.load(readFileSync(join(ROOT, 'manifests/monitoring/prometheusrule.yaml'), 'utf8')) as { spec: { groups: { rules: { record?: string }[] }[] } };
const MAIN_PANEL = 'Responses by rcode';

interface DemoPorts {
  dns: number;
  kubedns: number;
  metrics: number;
  sidecar: number;
  configDir: string;
  failed: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms${last ? ` (${String(last)})` : ''}`);
    await sleep(250);
  }
}

function stop(p: ChildProcess | undefined): Promise<void> {
  if (!p || p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => p.kill('SIGKILL'), 8000);
    p.once('exit', () => (clearTimeout(kill), resolve()));
    p.kill('SIGTERM');
  });
}

/** Grafana's variables, as a user looking at the whole deployment would have them. */
const expand = (expr: string) => expr.replaceAll('$namespace', 'kube-system').replaceAll('$pod', '.*').replaceAll('$__rate_interval', '10s');

type Sample = { metric: Record<string, string>; value?: [number, string]; values?: [number, string][] };

test('every panel of the Grafana dashboard returns data from a real Prometheus scraping the demo pod', { timeout: 150_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dashboard-'));
  let demo: ChildProcess | undefined;
  let prom: ChildProcess | undefined;
  let traffic = true;
  let demoOut = '';
  let promOut = '';
  try {
    const portsFile = join(dir, 'ports.json');
    demo = spawn(process.execPath, [join(ROOT, 'scripts/demo.mjs'), `--ports-file=${portsFile}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    demo.stdout!.on('data', (d) => (demoOut += d));
    demo.stderr!.on('data', (d) => (demoOut += d));
    const ports = await until('the demo pod is up', async () => {
      if (demo!.exitCode !== null) throw new Error(`demo exited: ${demoOut}`);
      return JSON.parse(await readFile(portsFile, 'utf8')) as DemoPorts;
    }, 60_000);
    assert.equal(ports.failed, 0, `the demo's own checks failed:\n${demoOut}`);

    // Prometheus, with the labels a PodMonitor would give, and the recording rules loaded.
    const webPort = await freePort();
    const labels = { namespace: 'kube-system', pod: 'kube-dns-demo' };
    await writeFile(join(dir, 'rules.yaml'), yaml.dump(RULES.spec));
    await writeFile(
      join(dir, 'prometheus.yml'),
      yaml.dump({
        global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
        rule_files: [join(dir, 'rules.yaml')],
        scrape_configs: [
          {
            job_name: 'kube-dns',
            static_configs: [
              { targets: [`127.0.0.1:${ports.metrics}`], labels: { ...labels, container: 'kubedns' } },
              { targets: [`127.0.0.1:${ports.sidecar}`], labels: { ...labels, container: 'sidecar' } },
            ],
          },
        ],
      }),
    );
    prom = spawn(
      'prometheus',
      [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${webPort}`, '--log.level=warn'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    prom.stdout!.on('data', (d) => (promOut += d));
    prom.stderr!.on('data', (d) => (promOut += d));
    const api = async (path: string, params: Record<string, string>) => {
      const r = await fetch(`http://127.0.0.1:${webPort}${path}?${new URLSearchParams(params)}`);
      const body = (await r.json()) as { status: string; error?: string; data: unknown };
      if (body.status !== 'success') throw new Error(`${path} ${JSON.stringify(params)}: ${body.error}`);
      return body.data;
    };
    await until('Prometheus is ready', async () => ((await fetch(`http://127.0.0.1:${webPort}/-/ready`)).ok ? true : undefined), 30_000);

    // A stub domain whose only server is down, so that forwards fail and some answers are SERVFAIL.
    const stubs = JSON.parse(await readFile(join(ports.configDir, 'stubDomains'), 'utf8')) as Record<string, string[]>;
    stubs['down.test'] = [`127.0.0.1:${await freePort()}`];
    await writeFile(join(ports.configDir, 'stubDomains'), JSON.stringify(stubs));

    // Traffic of every kind, through dnsmasq (the pod's port 53) and to kube-dns directly.
    const QUESTIONS: [number, string, 'A' | 'AAAA' | 'SRV' | 'PTR' | 'TXT'][] = [
      [ports.dns, 'kubernetes.default.svc.cluster.local', 'A'],
      [ports.kubedns, 'kubernetes.default.svc.cluster.local', 'A'],
      [ports.kubedns, 'frontend.shop.svc.cluster.local', 'AAAA'],
      [ports.kubedns, '_postgres._tcp.db.shop.svc.cluster.local', 'SRV'],
      [ports.kubedns, '7.12.96.10.in-addr.arpa', 'PTR'],
      [ports.kubedns, 'dns-version.cluster.local', 'TXT'],
      [ports.kubedns, 'nope.shop.svc.cluster.local', 'A'],
      [ports.kubedns, 'www.example.org', 'A'],
      [ports.dns, 'wiki.corp.internal', 'A'],
      [ports.kubedns, 'db.down.test', 'A'],
    ];
    const started = Date.now() / 1000;
    // Between 8 and 14 s, a burst of unique names (an application with a bad search path), so
    // the graph shows a change.
    const burst = () => Date.now() / 1000 - started > 8 && Date.now() / 1000 - started < 14;
    const ask = (port: number, name: string, type: (typeof QUESTIONS)[number][2]) =>
      query({ host: '127.0.0.1', port }, { name, type, timeoutMs: 1500 }).catch(() => undefined);
    const load = (async () => {
      for (let i = 0; traffic; i++) {
        await Promise.all([
          // a unique name in each round, so the caches also miss
          ...QUESTIONS.map(([port, name, type], k) => ask(port, k === 6 ? `nope-${i}.shop.svc.cluster.local` : name, type)),
          ...(burst() ? Array.from({ length: 15 }, (_, k) => ask(ports.kubedns, `api-${i}-${k}.example.com.shop.svc.cluster.local`, 'A')) : []),
        ]);
        await sleep(100);
      }
    })();

    const targets = DASHBOARD.panels.flatMap((p) => p.targets.map((t) => ({ panel: p.title, expr: expand(t.expr) })));
    assert.ok(targets.length >= 14, 'the dashboard has its panels');
    const records = RULES.spec.groups.flatMap((g) => g.rules).flatMap((r) => (r.record ? [r.record] : []));
    const pending = new Map([...targets.map((t) => [`${t.panel}: ${t.expr}`, t.expr] as const), ...records.map((r) => [`recording rule ${r}`, r] as const)]);
    const deadline = Date.now() + 60_000;
    while (pending.size && Date.now() < deadline) {
      for (const [what, expr] of pending) {
        const data = (await api('/api/v1/query', { query: expr })) as { result: Sample[] };
        if (data.result.some((s) => Number.isFinite(Number(s.value?.[1])))) pending.delete(what);
      }
      if (pending.size) await sleep(1000);
    }
    assert.deepEqual([...pending.keys()], [], `queries without data:\n${[...pending.keys()].join('\n')}\n${promOut}`);

    for (const v of DASHBOARD.templating.list.filter((x) => x.type === 'query')) {
      const m = /^label_values\((.*), (\w+)\)$/.exec(v.definition ?? '');
      assert.ok(m, `variable ${v.name}: label_values(selector, label)`);
      const values = (await api(`/api/v1/label/${m[2]}/values`, { 'match[]': expand(m[1]!) })) as string[];
      assert.ok(values.includes(m[2] === 'namespace' ? 'kube-system' : 'kube-dns-demo'), `variable ${v.name}: ${JSON.stringify(values)}`);
    }

    // The main graph over the run: at least 20 s of it, the burst included.
    await sleep(Math.max(0, (started + 20) * 1000 - Date.now()));
    const main = DASHBOARD.panels.find((p) => p.title === MAIN_PANEL)!;
    const now = Date.now() / 1000;
    const range = (await api('/api/v1/query_range', { query: expand(main.targets[0]!.expr), start: String(Math.floor(started)), end: String(Math.ceil(now)), step: '1' })) as { result: Sample[] };
    const series = range.result.map((s) => ({ name: s.metric['rcode'] ?? '?', points: (s.values ?? []).map(([t, v]) => [t, Number(v)] as [number, number]) }));
    const rcodes = series.map((s) => s.name).sort();
    for (const rc of ['NOERROR', 'NXDOMAIN', 'SERVFAIL']) assert.ok(rcodes.includes(rc), `${MAIN_PANEL}: ${rc} in ${rcodes.join(',')}`);
    assert.ok(series.every((s) => s.points.length >= 3), 'several points per series');
    const order = ['NOERROR', 'NXDOMAIN', 'SERVFAIL'];
    series.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
    const colors = series.map((s) => ({ NOERROR: '#56a64b', NXDOMAIN: '#ff9830', SERVFAIL: '#e02f44' })[s.name] ?? '#3274d9');
    const svg = stackedAreaSvg(`kube-dns: ${MAIN_PANEL} (demo pod, Prometheus scraping every second)`, 'queries / s', series, colors);
    assert.equal((svg.match(/class="series"/g) ?? []).length, series.length);
    const png = process.env['KUBE_DNS_DASHBOARD_PNG'];
    if (png) {
      await writeFile(join(dir, 'main.svg'), svg);
      await promisify(execFile)('rsvg-convert', ['-o', png, join(dir, 'main.svg')]);
    }
    traffic = false;
    await load;
  } finally {
    traffic = false;
    await Promise.all([stop(prom), stop(demo)]);
    await rm(dir, { recursive: true, force: true });
  }
});
