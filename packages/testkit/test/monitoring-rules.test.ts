// The alerts of manifests/monitoring/prometheusrule.yaml, run by Prometheus' own rule engine
// (promtool, Debian's `prometheus` package): `promtool check rules` on the rule groups, then
// `promtool test rules` with one series per alert that must page and one that must not.
// Every alert must appear in both lists and have its section in docs/runbook.md.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';

const ROOT = new URL('../../../../', import.meta.url).pathname;
const run = promisify(execFile);

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const RULES = yaml.load(readFileSync(join(ROOT, 'manifests/monitoring/prometheusrule.yaml'), 'utf8')) as { spec: { groups: { name: string; rules: Rule[] }[] } };
const ALERTS = RULES.spec.groups.flatMap((g) => g.rules).filter((r) => r.alert);
const RUNBOOK = readFileSync(join(ROOT, 'docs/runbook.md'), 'utf8');

// The labels a PodMonitor scrape gives every series of one kube-dns pod.
const POD = 'job="kube-dns",namespace="kube-system",pod="kube-dns-7d9c-abcde"';
const KUBEDNS = `${POD},container="kubedns",instance="10.244.0.7:10055"`;
const SIDECAR = `${POD},container="sidecar",instance="10.244.0.7:10054"`;
const podLabels = { job: 'kube-dns', namespace: 'kube-system', pod: 'kube-dns-7d9c-abcde' };
const kubednsLabels = { ...podLabels, container: 'kubedns', instance: '10.244.0.7:10055' };
const sidecarLabels = { ...podLabels, container: 'sidecar', instance: '10.244.0.7:10054' };
const jobLabels = { job: 'kube-dns', namespace: 'kube-system' };

interface Case {
  alert: string;
  why: string;
  /** promtool input series: [series, values] (one sample per minute). */
  series: [string, string][];
  at: string;
  /** The alerts' labels (severity and alertname added); empty: must stay silent. */
  fires: Record<string, string>[];
}

const bucket = (system: string, le: string) => `kubedns_dns_request_duration_seconds_bucket{${KUBEDNS},transport="udp",system="${system}",le="${le}"}`;
const slowHistogram = (system: string): [string, string][] => [
  [bucket(system, '0.1'), '0+0x20'],
  [bucket(system, '0.25'), '0+100x20'],
  [bucket(system, '+Inf'), '0+100x20'],
];

const CASES: Case[] = [
  { alert: 'KubeDNSDown', why: 'the only replica is not scraped', series: [[`up{${KUBEDNS}}`, '0x20']], at: '10m', fires: [{}] },
  { alert: 'KubeDNSDown', why: 'a replica is up', series: [[`up{${KUBEDNS}}`, '1x20']], at: '10m', fires: [] },
  { alert: 'KubeDNSTargetDown', why: 'the sidecar endpoint does not answer', series: [[`up{${SIDECAR}}`, '0x20']], at: '15m', fires: [sidecarLabels] },
  { alert: 'KubeDNSTargetDown', why: 'one failed scrape', series: [[`up{${SIDECAR}}`, '1 1 0 1x17']], at: '15m', fires: [] },
  { alert: 'KubeDNSNotReady', why: 'never synced', series: [[`kubedns_synced{${KUBEDNS}}`, '0x20']], at: '15m', fires: [kubednsLabels] },
  { alert: 'KubeDNSNotReady', why: 'synced after two minutes', series: [[`kubedns_synced{${KUBEDNS}}`, '0 0 1x18']], at: '15m', fires: [] },
  {
    alert: 'KubeDNSProbeFailing', why: '5 of 6 probes fail',
    series: [[`kubedns_probe_kubedns_errors{${SIDECAR}}`, '0+10x15'], [`kubedns_probe_kubedns_latency_ms_count{${SIDECAR}}`, '0+2x15']],
    at: '12m', fires: [sidecarLabels],
  },
  {
    alert: 'KubeDNSProbeFailing', why: '1 probe of 12 lost',
    series: [[`kubedns_probe_dnsmasq_errors{${SIDECAR}}`, '0+1x15'], [`kubedns_probe_dnsmasq_latency_ms_count{${SIDECAR}}`, '0+11x15']],
    at: '12m', fires: [],
  },
  {
    alert: 'KubeDNSServfailRatioHigh', why: '10 SERVFAIL/s of 60 queries/s',
    series: [
      [`kubedns_dns_requests_total{${KUBEDNS},qtype="A",rcode="SERVFAIL",transport="udp"}`, '0+600x20'],
      [`kubedns_dns_requests_total{${KUBEDNS},qtype="A",rcode="NOERROR",transport="udp"}`, '0+3000x20'],
    ],
    at: '20m', fires: [jobLabels],
  },
  {
    alert: 'KubeDNSServfailRatioHigh', why: '1% SERVFAIL',
    series: [
      [`kubedns_dns_requests_total{${KUBEDNS},qtype="A",rcode="SERVFAIL",transport="udp"}`, '0+60x20'],
      [`kubedns_dns_requests_total{${KUBEDNS},qtype="A",rcode="NOERROR",transport="udp"}`, '0+6000x20'],
    ],
    at: '20m', fires: [],
  },
  {
    alert: 'KubeDNSServfailRatioHigh', why: 'all SERVFAIL, but only one query every two seconds',
    series: [[`kubedns_dns_requests_total{${KUBEDNS},qtype="A",rcode="SERVFAIL",transport="udp"}`, '0+30x20']],
    at: '20m', fires: [],
  },
  { alert: 'KubeDNSLatencyHigh', why: 'cluster names at p99 ~250 ms', series: slowHistogram('auth'), at: '20m', fires: [{ ...podLabels, system: 'auth' }] },
  {
    alert: 'KubeDNSLatencyHigh', why: 'one replica of ten answers cluster names in 100-250 ms, the others under a millisecond: the p99 of all is fast, that pod is not',
    series: [
      ...slowHistogram('auth'),
      ...Array.from({ length: 9 }, (_, i): [string, string][] => {
        const other = (le: string) => bucket('auth', le).replace('kube-dns-7d9c-abcde', `kube-dns-7d9c-ok${i}`);
        return [[other('0.001'), '0+6000x20'], [other('0.1'), '0+6000x20'], [other('0.25'), '0+6000x20'], [other('+Inf'), '0+6000x20']];
      }).flat(),
    ],
    at: '20m', fires: [{ ...podLabels, system: 'auth' }],
  },
  {
    alert: 'KubeDNSLatencyHigh', why: 'a slow p99 of a query a minute (too few to judge)',
    series: [[bucket('auth', '0.1'), '0x20'], [bucket('auth', '0.25'), '0+1x20'], [bucket('auth', '+Inf'), '0+1x20']],
    at: '20m', fires: [],
  },
  { alert: 'KubeDNSLatencyHigh', why: 'forwarded names at p99 ~250 ms', series: slowHistogram('recursive'), at: '20m', fires: [] },
  {
    alert: 'KubeDNSForwardFailures', why: '30% of forwards fail',
    series: [[`kubedns_forward_failures_total{${KUBEDNS},server="10.0.0.1:53"}`, '0+30x20'], [`kubedns_forward_requests_total{${KUBEDNS},server="10.0.0.1:53"}`, '0+100x20']],
    at: '20m', fires: [jobLabels],
  },
  {
    alert: 'KubeDNSForwardFailures', why: '2% of forwards fail',
    series: [[`kubedns_forward_failures_total{${KUBEDNS},server="10.0.0.1:53"}`, '0+2x20'], [`kubedns_forward_requests_total{${KUBEDNS},server="10.0.0.1:53"}`, '0+100x20']],
    at: '20m', fires: [],
  },
  {
    alert: 'KubeDNSUpstreamDown', why: "kube-dns's upstream fails every query; one of dnsmasq's stub servers answers no replica's check (while dnsmasq's own failed count stays 0, as it does)",
    series: [
      [`kubedns_forward_failures_total{${KUBEDNS},server="10.0.0.1:53"}`, '0+60x20'],
      [`kubedns_forward_requests_total{${KUBEDNS},server="10.0.0.1:53"}`, '0+60x20'],
      [`kubedns_forward_requests_total{${KUBEDNS},server="10.0.0.2:53"}`, '0+60x20'],
      [`kubedns_dnsmasq_server_failures{${SIDECAR},server="10.150.0.1#53"}`, '0x20'],
      [`kubedns_dnsmasq_server_queries{${SIDECAR},server="10.150.0.1#53"}`, '0+60x20'],
      [`kubedns_dnsmasq_server_up{${SIDECAR},server="10.150.0.1#53"}`, '0x20'],
      [`kubedns_dnsmasq_server_up{${SIDECAR},server="10.150.0.2#53"}`, '1x20'],
    ],
    at: '20m', fires: [{ ...jobLabels, server: '10.0.0.1:53' }, { ...jobLabels, server: '10.150.0.1#53' }],
  },
  {
    alert: 'KubeDNSUpstreamDown', why: 'a dnsmasq server one replica cannot reach while another can (that pod\'s network, not the server)',
    series: [
      [`kubedns_dnsmasq_server_up{${SIDECAR},server="10.150.0.1#53"}`, '0x20'],
      [`kubedns_dnsmasq_server_up{${SIDECAR.replace('kube-dns-7d9c-abcde', 'kube-dns-7d9c-fghij')},server="10.150.0.1#53"}`, '1x20'],
    ],
    at: '20m', fires: [],
  },
  {
    alert: 'KubeDNSUpstreamDown', why: 'an upstream losing half its queries (a ForwardFailures matter)',
    series: [[`kubedns_forward_failures_total{${KUBEDNS},server="10.0.0.1:53"}`, '0+30x20'], [`kubedns_forward_requests_total{${KUBEDNS},server="10.0.0.1:53"}`, '0+60x20']],
    at: '20m', fires: [],
  },
  { alert: 'KubeDNSForwardLoop', why: 'a loop found at minute 3', series: [[`kubedns_forward_loops_detected_total{${KUBEDNS}}`, '0 0 0 1x17']], at: '6m', fires: [kubednsLabels] },
  {
    alert: 'KubeDNSForwardLoop', why: 'a loop found at start, before the first scrape: the counter starts at 1 and never moves',
    series: [[`kubedns_forward_loops_detected_total{${KUBEDNS}}`, '1x20'], [`kubedns_forward_loops_active{${KUBEDNS}}`, '1x20']], at: '10m', fires: [kubednsLabels],
  },
  { alert: 'KubeDNSForwardLoop', why: 'no loop', series: [[`kubedns_forward_loops_detected_total{${KUBEDNS}}`, '0x20'], [`kubedns_forward_loops_active{${KUBEDNS}}`, '0x20']], at: '6m', fires: [] },
  { alert: 'KubeDNSDnsmasqCacheEvictions', why: '10 evictions/s for 40 minutes', series: [[`kubedns_dnsmasq_evictions{${SIDECAR}}`, '0+600x45']], at: '45m', fires: [podLabels] },
  { alert: 'KubeDNSDnsmasqCacheEvictions', why: '1 eviction/s', series: [[`kubedns_dnsmasq_evictions{${SIDECAR}}`, '0+60x45']], at: '45m', fires: [] },
  { alert: 'KubeDNSForwardConcurrencyLimit', why: 'one query a second turned away at the cap', series: [[`kubedns_forward_rejected_total{${KUBEDNS}}`, '0+60x20']], at: '15m', fires: [podLabels] },
  { alert: 'KubeDNSForwardConcurrencyLimit', why: 'three rejections a minute', series: [[`kubedns_forward_rejected_total{${KUBEDNS}}`, '0+3x20']], at: '15m', fires: [] },
  {
    alert: 'KubeDNSAPISyncStale', why: 'nothing heard for 30 minutes and requests failing',
    series: [
      [`kubedns_kube_last_sync_timestamp_seconds{${KUBEDNS},resource="endpointslices"}`, '0x30'],
      [`kubedns_kube_last_heard_timestamp_seconds{${KUBEDNS},resource="endpointslices"}`, '0x30'],
      [`kubedns_kube_errors_total{${KUBEDNS},resource="endpointslices"}`, '0+1x30'],
    ],
    at: '30m', fires: [{ ...podLabels, resource: 'endpointslices' }],
  },
  {
    alert: 'KubeDNSAPISyncStale', why: 'two watch resets, each resumed at once, on a resource with no change for an hour: bookmarks keep arriving',
    series: [
      [`kubedns_kube_last_sync_timestamp_seconds{${KUBEDNS},resource="services"}`, '0x40'],
      [`kubedns_kube_errors_total{${KUBEDNS},resource="services"}`, '0x20 1x4 2x15'],
      // a bookmark a minute: the value is the Unix time of the current minute
      [`kubedns_kube_last_heard_timestamp_seconds{${KUBEDNS},resource="services"}`, '0+60x40'],
    ],
    at: '30m', fires: [],
  },
  {
    alert: 'KubeDNSAPISyncStale', why: 'a quiet cluster: nothing heard, no errors',
    series: [
      [`kubedns_kube_last_sync_timestamp_seconds{${KUBEDNS},resource="endpointslices"}`, '0x30'],
      [`kubedns_kube_last_heard_timestamp_seconds{${KUBEDNS},resource="endpointslices"}`, '0x30'],
      [`kubedns_kube_errors_total{${KUBEDNS},resource="endpointslices"}`, '0x30'],
    ],
    at: '30m', fires: [],
  },
  {
    alert: 'KubeDNSAPISyncStale', why: 'a few failed requests while watch events keep arriving',
    series: [
      [`kubedns_kube_last_sync_timestamp_seconds{${KUBEDNS},resource="endpointslices"}`, '0x30'],
      // the value is the Unix time of the last event: always the current minute here
      [`kubedns_kube_last_event_timestamp_seconds{${KUBEDNS},resource="endpointslices"}`, '0+60x30'],
      [`kubedns_kube_last_heard_timestamp_seconds{${KUBEDNS},resource="endpointslices"}`, '0+60x30'],
      [`kubedns_kube_errors_total{${KUBEDNS},resource="endpointslices"}`, '0+1x30'],
    ],
    at: '30m', fires: [],
  },
  {
    alert: 'KubeDNSAPISyncStale', why: '--namespaces: one namespace heard nothing for 30 minutes, its requests failing, while another\'s events keep arriving',
    series: [
      [`kubedns_kube_last_sync_timestamp_seconds{${KUBEDNS},resource="services"}`, '0x30'],
      // the freshest namespace's last event; the stalest namespace's last heard
      [`kubedns_kube_last_event_timestamp_seconds{${KUBEDNS},resource="services"}`, '0+60x30'],
      [`kubedns_kube_last_heard_timestamp_seconds{${KUBEDNS},resource="services"}`, '0x30'],
      [`kubedns_kube_errors_total{${KUBEDNS},resource="services"}`, '0+1x30'],
    ],
    at: '30m', fires: [{ ...podLabels, resource: 'services' }],
  },
  { alert: 'KubeDNSConfigRejected', why: 'an edit rejected at minute 3', series: [[`kubedns_config_rejects_total{${KUBEDNS}}`, '0 0 0 1x20']], at: '6m', fires: [kubednsLabels] },
  {
    alert: 'KubeDNSConfigRejected', why: 'the pod started with a bad ConfigMap',
    series: [[`kubedns_config_rejects_total{${KUBEDNS}}`, '1x20'], [`process_start_time_seconds{${KUBEDNS}}`, '0x20']],
    at: '5m', fires: [kubednsLabels],
  },
  {
    alert: 'KubeDNSConfigRejected', why: 'a rejected edit an hour ago',
    series: [[`kubedns_config_rejects_total{${KUBEDNS}}`, '1x80'], [`process_start_time_seconds{${KUBEDNS}}`, '0x80']],
    at: '70m', fires: [],
  },
  {
    // 10 of 6,000 samples a minute over 1 s: the p99 stays low, the stalls are there. (Not the
    // max gauge: a read resets it, so a second scraper or a curl would hide stalls from this one.)
    alert: 'KubeDNSEventLoopStalled', why: '2 s stalls for 20 minutes',
    series: [
      [`kubedns_event_loop_delay_seconds_bucket{${KUBEDNS},le="0.01"}`, '0+5990x20'],
      [`kubedns_event_loop_delay_seconds_bucket{${KUBEDNS},le="1"}`, '0+5990x20'],
      [`kubedns_event_loop_delay_seconds_bucket{${KUBEDNS},le="+Inf"}`, '0+6000x20'],
      [`kubedns_event_loop_delay_seconds_count{${KUBEDNS}}`, '0+6000x20'],
      [`kubedns_event_loop_delay_max_seconds{${KUBEDNS}}`, '0x20'],
    ],
    at: '20m', fires: [podLabels],
  },
  {
    alert: 'KubeDNSEventLoopStalled', why: 'p99 delay ~240 ms',
    series: [
      [`kubedns_event_loop_delay_seconds_bucket{${KUBEDNS},le="0.1"}`, '0+0x20'],
      [`kubedns_event_loop_delay_seconds_bucket{${KUBEDNS},le="0.25"}`, '0+50x20'],
      [`kubedns_event_loop_delay_seconds_bucket{${KUBEDNS},le="+Inf"}`, '0+50x20'],
    ],
    at: '20m', fires: [podLabels],
  },
  {
    alert: 'KubeDNSEventLoopStalled', why: 'a healthy loop (max 50 ms, everything under 10 ms)',
    series: [
      [`kubedns_event_loop_delay_max_seconds{${KUBEDNS}}`, '0.05x20'],
      [`kubedns_event_loop_delay_seconds_bucket{${KUBEDNS},le="0.01"}`, '0+50x20'],
      [`kubedns_event_loop_delay_seconds_bucket{${KUBEDNS},le="1"}`, '0+50x20'],
      [`kubedns_event_loop_delay_seconds_bucket{${KUBEDNS},le="+Inf"}`, '0+50x20'],
      [`kubedns_event_loop_delay_seconds_count{${KUBEDNS}}`, '0+50x20'],
    ],
    at: '20m', fires: [],
  },
];

const runbookAnchor = (alert: string) => alert.toLowerCase();
const RUNBOOK_BASE = 'https://github.com/kube-dns-ts/kube-dns/blob/main/docs/runbook.md#';

/** promtool compares annotations exactly; the unit test pins the runbook link, the rest is prose. */
function rulesForUnitTest() {
  return {
    groups: RULES.spec.groups.map((g) => ({
      ...g,
      rules: g.rules.map((r) => (r.alert ? { ...r, annotations: { runbook_url: r.annotations?.runbook_url } } : r)),
    })),
  };
}

function unitTests() {
  return {
    rule_files: ['rules.yaml'],
    evaluation_interval: '1m',
    tests: [
      ...CASES.map((c) => ({
        name: `${c.alert}: ${c.why}`,
        interval: '1m',
        input_series: c.series.map(([series, values]) => ({ series, values })),
        alert_rule_test: [
          {
            eval_time: c.at,
            alertname: c.alert,
            exp_alerts: c.fires.map((labels) => ({
              exp_labels: { ...labels, severity: ALERTS.find((a) => a.alert === c.alert)!.labels!.severity },
              exp_annotations: { runbook_url: RUNBOOK_BASE + runbookAnchor(c.alert) },
            })),
          },
        ],
      })),
      {
        name: 'recording rules: cache hit ratio and time since the API server was heard from',
        interval: '1m',
        input_series: [
          { series: `kubedns_dnsmasq_hits{${SIDECAR}}`, values: '0+90x10' },
          { series: `kubedns_dnsmasq_misses{${SIDECAR}}`, values: '0+10x10' },
          { series: `kubedns_kube_last_sync_timestamp_seconds{${KUBEDNS},resource="services"}`, values: '60x10' },
          { series: `kubedns_kube_last_event_timestamp_seconds{${KUBEDNS},resource="services"}`, values: '180x10' },
          { series: `kubedns_kube_last_heard_timestamp_seconds{${KUBEDNS},resource="services"}`, values: '180x10' },
        ],
        promql_expr_test: [
          // rounded: 0.9 from rates comes out as 0.8999999999999999
          { expr: 'round(kubedns:dnsmasq_cache_hit:ratio_rate5m, 0.001)', eval_time: '10m', exp_samples: [{ labels: '{job="kube-dns",namespace="kube-system"}', value: 0.9 }] },
          {
            expr: 'kubedns:kube_last_update_age_seconds',
            eval_time: '10m',
            exp_samples: [{ labels: `kubedns:kube_last_update_age_seconds{${POD},resource="services"}`, value: 600 - 180 }],
          },
        ],
      },
    ],
  };
}

test('promtool check rules accepts the PrometheusRule groups', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'rules-'));
  try {
    await writeFile(join(dir, 'rules.yaml'), yaml.dump(RULES.spec));
    const { stdout } = await run('promtool', ['check', 'rules', join(dir, 'rules.yaml')]);
    assert.match(stdout, new RegExp(`SUCCESS: ${RULES.spec.groups.flatMap((g) => g.rules).length} rules found`));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('every alert fires on series that should page and stays silent on series that should not (promtool test rules)', async () => {
  for (const a of ALERTS) {
    assert.ok(CASES.some((c) => c.alert === a.alert && c.fires.length > 0), `${a.alert}: no case where it fires`);
    assert.ok(CASES.some((c) => c.alert === a.alert && c.fires.length === 0), `${a.alert}: no case where it stays silent`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'rules-'));
  try {
    await writeFile(join(dir, 'rules.yaml'), yaml.dump(rulesForUnitTest()));
    await writeFile(join(dir, 'tests.yaml'), yaml.dump(unitTests(), { lineWidth: -1 }));
    const r = await run('promtool', ['test', 'rules', join(dir, 'tests.yaml')]).catch((e: { stdout?: string; stderr?: string }) => e);
    assert.match(`${r.stdout}`, /SUCCESS/, `${r.stdout}\n${r.stderr}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the alerts' runbook links point at the repository the images name as their source", () => {
  // two names for one repository: one of the links would 404
  const source = /^ARG SOURCE=(\S+)$/m.exec(readFileSync(join(ROOT, 'images/Dockerfile'), 'utf8'))?.[1];
  assert.ok(source, 'images/Dockerfile sets ARG SOURCE');
  assert.ok(RUNBOOK_BASE.startsWith(`${source}/blob/`), `${RUNBOOK_BASE} is in ${source}`);
});

test('every alert has a severity, a summary, a runbook link and a runbook section that says what to do', () => {
  for (const a of ALERTS) {
    assert.match(a.labels?.severity ?? '', /^(critical|warning)$/, a.alert);
    assert.ok(a.annotations?.summary && a.annotations.description, `${a.alert}: summary and description`);
    assert.equal(a.annotations?.runbook_url, RUNBOOK_BASE + runbookAnchor(a.alert!));
    const start = RUNBOOK.search(new RegExp(`^## ${a.alert}$`, 'm'));
    assert.ok(start >= 0, `docs/runbook.md has no "## ${a.alert}" section`);
    const next = RUNBOOK.slice(start + 3).search(/^## /m);
    const section = RUNBOOK.slice(start, next < 0 ? undefined : start + 3 + next);
    for (const part of ['Meaning', 'Confirm', 'Act']) assert.match(section, new RegExp(`\\*\\*${part}\\*\\*`), `${a.alert}: runbook section lacks **${part}**`);
  }
});

test('the monitoring component lists files that exist and the main kustomization offers it', () => {
  const comp = yaml.load(readFileSync(join(ROOT, 'manifests/monitoring/kustomization.yaml'), 'utf8')) as {
    kind: string;
    resources: string[];
    configMapGenerator?: { files: string[] }[];
  };
  assert.equal(comp.kind, 'Component');
  for (const f of [...comp.resources, ...(comp.configMapGenerator ?? []).flatMap((g) => g.files)]) {
    assert.doesNotThrow(() => readFileSync(join(ROOT, 'manifests/monitoring', f)), f);
  }
  const main = readFileSync(join(ROOT, 'manifests/kustomization.yaml'), 'utf8');
  assert.match(main, /^# components:\n#\s+- monitoring$/m, 'the main kustomization has a commented `components: [monitoring]`');
});
