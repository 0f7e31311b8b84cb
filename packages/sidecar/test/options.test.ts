import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FlagError } from '@kube-dns/config';
import { DEFAULT_OPTIONS, parseProbeSpec, parseSidecarArgs } from '../src/index.js';

const NAME = 'kubernetes.default.svc.cluster.local';

test('probe specs the original accepts (as in the kubernetes/dns tests)', () => {
  const cases: [string, { host: string; port: number; type: string }][] = [
    [`kubedns,[127.0.0.1]:10053,${NAME},5,SRV`, { host: '127.0.0.1', port: 10053, type: 'SRV' }],
    [`dnsmasq,[127.0.0.1]:53,${NAME},5,SRV`, { host: '127.0.0.1', port: 53, type: 'SRV' }],
    [`dnsmasq,[127.0.0.1]:53,${NAME},5,ANY`, { host: '127.0.0.1', port: 53, type: 'ANY' }],
    [`dnsmasq,[127.0.0.1]:53,${NAME},5,A`, { host: '127.0.0.1', port: 53, type: 'A' }],
    [`dnsmasq,[::1]:53,${NAME},5,AAAA`, { host: '::1', port: 53, type: 'AAAA' }],
    [`dnsmasq,[::1]:53,${NAME},5,SRV`, { host: '::1', port: 53, type: 'SRV' }],
    [`dnsmasq,[::1]:53,${NAME},5`, { host: '::1', port: 53, type: 'ANY' }],
  ];
  for (const [text, want] of cases) {
    const r = parseProbeSpec(text);
    assert.ok(r.ok, `${text}: ${r.ok ? '' : r.error}`);
    assert.equal(r.value.name, `${NAME}.`, text);
    assert.equal(r.value.intervalMs, 5000, text);
    assert.deepEqual({ ...r.value.server, type: r.value.type }, want, text);
  }
});

test('probe defaults: port 53 appended, 5 s interval, type ANY, name already qualified kept', () => {
  const r = parseProbeSpec('dnsmasq,127.0.0.1,ok.local.');
  assert.ok(r.ok);
  assert.deepEqual(r.value, {
    label: 'dnsmasq',
    server: { host: '127.0.0.1', port: 53 },
    serverText: '127.0.0.1:53',
    name: 'ok.local.',
    intervalMs: 5000,
    type: 'ANY',
  });
  const v6 = parseProbeSpec('x,::1,ok.local');
  assert.ok(v6.ok);
  assert.deepEqual(v6.value.server, { host: '::1', port: 53 });
});

test('probe specs the original rejects, with its messages (as in the kubernetes/dns tests)', () => {
  const cases: [string, RegExp][] = [
    ['dnsmasq,[::1]:53', /invalid format to --probe/],
    [`dnsmasq,[::1]:53,${NAME},5,SRV,extra`, /invalid format to --probe/],
    [`dn$m@s#,[::1]:53,${NAME},5,SRV`, /label must be of format \^\[a-zA-Z0-9_\]\+\$/],
    [`dnsmasq,[::1]:53,${NAME},0.5,SRV`, /invalid syntax/],
    [`dnsmasq,[::1]:53,${NAME},,SRV`, /invalid syntax/],
    [`dnsmasq,[::1]:53,${NAME},5,BogusType`, /invalid type for DNS: BogusType/],
    [`dnsmasq,[::1]:53,${NAME},5,srv`, /invalid type for DNS: srv/],
    // Ours: the original took these and then probed in a tight loop or failed every probe.
    [`dnsmasq,[::1]:53,${NAME},0,SRV`, /at least 1 second/],
    [`dnsmasq,127.0.0.1:99999,${NAME}`, /out of range/],
    [`dnsmasq,127.0.0.1:x,${NAME}`, /not a number/],
    // a name dns-packet would send as a malformed question (the probe then blamed the server)
    [`dnsmasq,127.0.0.1,kubernetes.default.svc.cluster.local..`, /empty label/],
    [`dnsmasq,127.0.0.1,a..cluster.local`, /empty label/],
    [`dnsmasq,127.0.0.1,${'x'.repeat(64)}.cluster.local`, /label of 64 octets/],
  ];
  for (const [text, want] of cases) {
    const r = parseProbeSpec(text);
    assert.ok(!r.ok, `${text} was accepted`);
    assert.match(r.error, want, text);
  }
});

test('command line: defaults are the original manifest values', () => {
  const r = parseSidecarArgs([]);
  assert.equal(r.kind, 'run');
  assert.deepEqual(r.kind === 'run' && r.options, { ...DEFAULT_OPTIONS, probes: [] });
  assert.equal(DEFAULT_OPTIONS.prometheusPort, 10054);
  assert.equal(DEFAULT_OPTIONS.prometheusNamespace, 'kubedns');
});

test('command line: the official manifest args, repeated --probe, klog flags and Go spellings', () => {
  const r = parseSidecarArgs([
    '--v=2',
    '--logtostderr',
    `--probe=kubedns,127.0.0.1:10053,${NAME},5,SRV`,
    '--probe',
    `dnsmasq,127.0.0.1:53,${NAME},5,SRV`,
    '--dnsmasq_port=5353',
    '--prometheus-port',
    '9154',
    '--probe-failure-threshold=5',
  ]);
  assert.equal(r.kind, 'run');
  if (r.kind !== 'run') return;
  assert.deepEqual(
    r.options.probes.map((p) => [p.label, p.server.port, p.type]),
    [
      ['kubedns', 10053, 'SRV'],
      ['dnsmasq', 53, 'SRV'],
    ],
  );
  assert.equal(r.options.verbosity, 2);
  assert.equal(r.options.dnsmasqPort, 5353);
  assert.equal(r.options.prometheusPort, 9154);
  assert.equal(r.options.probeFailureThreshold, 5);
});

test('command line errors name the flag and the problem', () => {
  const cases: [string[], RegExp][] = [
    [['--probe=dnsmasq,[::1]:53'], /--probe: invalid format to --probe/],
    [[`--probe=a,127.0.0.1,x`, `--probe=a,127.0.0.1,y`], /probe label a is used twice/],
    [['--probe-failure-threshold=0'], /--probe-failure-threshold: must be at least 1/],
    [['--dnsmasq-port=0'], /--dnsmasq-port: must be between 1 and 65535/],
    [['--prometheus-port=abc'], /--prometheus-port: not an integer/],
    [['--prometheus-namespace=kube-dns'], /--prometheus-namespace: not a valid Prometheus metric name prefix/],
    [['--prometheus-path=metrics'], /--prometheus-path: must start with "\/"/],
    [['--probes=a,b,c'], /unknown flag: --probes/],
    [['--version=yes'], /--version: want true, false or raw/],
    [['stray'], /unexpected arguments: stray/],
  ];
  for (const [argv, want] of cases) {
    assert.throws(() => parseSidecarArgs(argv), (e: unknown) => e instanceof FlagError && want.test(e.message), argv.join(' '));
  }
});

test('command line: --version, --version=raw and --help', () => {
  assert.deepEqual(parseSidecarArgs(['--version']), { kind: 'version', raw: false });
  assert.deepEqual(parseSidecarArgs(['--version=raw']), { kind: 'version', raw: true });
  assert.equal(parseSidecarArgs(['--version=false']).kind, 'run');
  // a Go boolean, as the original's pkg/version flag
  assert.deepEqual(parseSidecarArgs(['--version=1']), { kind: 'version', raw: false });
  assert.deepEqual(parseSidecarArgs(['--version=TRUE']), { kind: 'version', raw: false });
  assert.equal(parseSidecarArgs(['--version=0']).kind, 'run');
  assert.equal(parseSidecarArgs(['--version=F']).kind, 'run');
  const help = parseSidecarArgs(['--help']);
  assert.equal(help.kind, 'help');
  assert.match(help.kind === 'help' ? help.text : '', /--probe strings[\s\S]*--probe-failure-threshold int/);
});
