// Flags, dnsmasq arguments and servers-file lines, including the cases of the original nanny's
// unit tests (kubernetes/dns pkg/dnsmasq nanny_test.go), re-expressed as servers-file lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FlagError, parseConfig, silentLogger } from '@kube-dns/config';
import { addnHostsPaths, argumentConflicts, buildDnsmasqArgs, resolvFilePath, watchedHostsPaths } from '../src/dnsmasq-args.js';
import { hostsFileText } from '../src/hosts-file.js';
import { extractDnsmasqArgs, parseNannyOptions } from '../src/options.js';
import { resolveStubDomains } from '../src/resolve-names.js';
import { serverLines, toServerAddress, unionLines } from '../src/servers-file.js';

test('ExtractDnsmasqArgs cases of the original', () => {
  const cases: [string[], string[], string[]][] = [
    [[], [], []],
    [['a'], [], ['a']],
    [['a', '--'], [], ['a']],
    [['a', '--', 'b'], ['b'], ['a']],
    [['--', 'b'], ['b'], []],
    [['a', 'b', '--', 'c', 'd'], ['c', 'd'], ['a', 'b']],
  ];
  for (const [argv, dnsmasqArgs, rest] of cases) assert.deepEqual(extractDnsmasqArgs(argv), { dnsmasqArgs, rest }, JSON.stringify(argv));
});

/** Config → (resolved) server set, as the nanny builds it; google-public-dns-a resolves via a fake. */
async function serverSet(data: Record<string, string>) {
  const r = parseConfig(data);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
  const stubs = await resolveStubDomains(r.config.stubDomains, {
    kubednsServer: { host: '127.0.0.1', port: 10053 },
    clusterDomain: 'cluster.local',
    log: silentLogger(),
    systemLookup: async (name) => {
      if (name === 'google-public-dns-a.google.com') return '8.8.8.8';
      throw new Error(`getaddrinfo ENOTFOUND ${name}`);
    },
  });
  return { stubDomains: stubs.stubDomains, upstreams: r.config.upstreamNameservers.map((ns) => toServerAddress(ns)) };
}

test('NannyConfig cases of the original, as servers-file lines, with IPv6 in the form dnsmasq accepts', async () => {
  assert.deepEqual(serverLines(await serverSet({})), []);

  const stubs = await serverSet({
    stubDomains: JSON.stringify({
      'acme.local': ['1.1.1.1'],
      'widget.local': ['2.2.2.2:10053', '3.3.3.3'],
      'google.local': ['google-public-dns-a.google.com'],
    }),
  });
  assert.deepEqual(serverLines(stubs), [
    'server=/acme.local/1.1.1.1',
    'server=/google.local/8.8.8.8',
    'server=/widget.local/2.2.2.2#10053',
    'server=/widget.local/3.3.3.3',
  ]);

  const up = await serverSet({ upstreamNameservers: '["2.2.2.2:10053", "3.3.3.3"]' });
  assert.deepEqual(serverLines(up), ['server=2.2.2.2#10053', 'server=3.3.3.3']);

  // The original wrote [2001:db8:2::2] and [2001:db8:3::3]#53, which dnsmasq 2.90 refuses.
  const v6 = await serverSet({ upstreamNameservers: '["2001:db8:1::1", "[2001:db8:2::2]", "[2001:db8:3::3]:53"]' });
  assert.deepEqual(serverLines(v6), ['server=2001:db8:1::1', 'server=2001:db8:2::2', 'server=2001:db8:3::3#53']);
});

test('the ConfigMap documentation example: stub servers with ports, bracketed IPv6, names; unresolvable names are left out', async () => {
  const set = await serverSet({
    stubDomains: JSON.stringify({ 'acme.local': ['1.2.3.4:5353', '[2001:db8::1]:53', '2001:db8::2', 'nowhere.invalid'], 'dead.local': ['nowhere.invalid'] }),
    upstreamNameservers: '["8.8.8.8:53", "[2001:db8::3]:53", "2001:db8::4"]',
  });
  assert.deepEqual(serverLines(set), [
    'server=/acme.local/1.2.3.4#5353',
    'server=/acme.local/2001:db8::1#53',
    'server=/acme.local/2001:db8::2',
    'server=8.8.8.8#53',
    'server=2001:db8::3#53',
    'server=2001:db8::4',
  ]);
});

test('the transition file lists old and new servers once each', () => {
  assert.deepEqual(unionLines(['server=a', 'server=b'], ['server=b', 'server=c']), ['server=a', 'server=b', 'server=c']);
});

test('dnsmasq arguments: the operator\'s first, then foreground, stderr log, no resolv.conf, our servers file and hosts dir', () => {
  const paths = { serversFile: '/run/n/servers', hostsDir: '/run/n/hosts.d', largeHostsFile: '/run/n/configmap-hosts-large' };
  const manifest = ['-k', '--cache-size=1000', '--no-negcache', '--dns-loop-detect', '--log-facility=-', '--server=/cluster.local/127.0.0.1#10053'];
  const ours = ['--no-resolv', '--servers-file=/run/n/servers', '--hostsdir=/run/n/hosts.d', '--addn-hosts=/run/n/configmap-hosts-large'];
  assert.deepEqual(buildDnsmasqArgs(manifest, paths), [...manifest, ...ours]);
  assert.deepEqual(buildDnsmasqArgs(['--cache-size=10'], paths), [
    '--cache-size=10', '--keep-in-foreground', '--log-facility=-', ...ours,
  ]);
  assert.deepEqual(buildDnsmasqArgs(['--no-daemon', '-8', '/var/log/d.log'], paths).slice(0, 4), ['--no-daemon', '-8', '/var/log/d.log', '--no-resolv']);
});

test('facts read back from the operator\'s dnsmasq arguments', () => {
  assert.deepEqual(addnHostsPaths(['--addn-hosts=/a', '-H', '/b', '-H/c', '--addn-hosts', '/d', '--hostsdir=/e']), ['/a', '/b', '/c', '/d']);
  assert.deepEqual(watchedHostsPaths(['--addn-hosts=/a', '--hostsdir=/e', '--hostsdir', '/f']), ['/a', '/e', '/f']);
  assert.equal(resolvFilePath([]), '/etc/resolv.conf');
  assert.equal(resolvFilePath(['--resolv-file=/etc/r1', '-r/etc/r2']), '/etc/r2');
  assert.equal(resolvFilePath(['--no-resolv', '--resolv-file=/etc/r1']), undefined, 'the operator\'s --no-resolv: no resolv.conf at all');
  assert.equal(resolvFilePath(['-R']), undefined);
  assert.deepEqual(argumentConflicts(['-k']), []);
  assert.match(argumentConflicts(['--servers-file=/x'])[0]!, /--servers-file is managed by dnsmasq-nanny/);
});

test('hosts file text from the ConfigMap entries', () => {
  const r = parseConfig({ hosts: '# office\n192.0.2.1 printer printer.corp\n2001:db8::5 v6host\n' });
  assert.ok(r.ok);
  assert.equal(hostsFileText(r.config.hosts).split('\n').slice(1).join('\n'), '192.0.2.1\tprinter printer.corp\n2001:db8::5\tv6host\n');
});

test('flags: the original manifest\'s single-dash Go flags, double dashes, defaults and passthrough', () => {
  const r = parseNannyOptions(['-v=2', '-logtostderr', '-configDir=/etc/k8s/dns/dnsmasq-nanny', '-restartDnsmasq=true', '--', '-k', '--cache-size=1000']);
  assert.equal(r.kind, 'options');
  if (r.kind !== 'options') return;
  assert.equal(r.options.verbosity, 2);
  assert.equal(r.options.restartDnsmasq, true);
  assert.equal(r.options.configDir, '/etc/k8s/dns/dnsmasq-nanny');
  assert.equal(r.options.syncIntervalMs, 10_000);
  assert.equal(r.options.dnsmasqExec, '/usr/sbin/dnsmasq');
  assert.deepEqual(r.options.kubednsServer, { host: '127.0.0.1', port: 10053 });
  assert.equal(r.options.logIntervalMs, 0);
  assert.equal(r.options.reloadGracePeriodMs, 3000);
  assert.deepEqual(r.options.dnsmasqArgs, ['-k', '--cache-size=1000']);

  const d = parseNannyOptions(['--syncInterval', '100ms', '--restartDnsmasq', '-logInterval=1m', '--kubednsServer=[::1]:5353', '-stateDir=rel', '--clusterDomain=Example.COM.'], '/work');
  assert.ok(d.kind === 'options');
  if (d.kind !== 'options') return;
  assert.equal(d.options.syncIntervalMs, 100);
  assert.equal(d.options.restartDnsmasq, true);
  assert.equal(d.options.logIntervalMs, 60_000);
  assert.deepEqual(d.options.kubednsServer, { host: '::1', port: 5353 });
  assert.equal(d.options.stateDir, '/work/rel', 'dnsmasq runs in /: paths are made absolute');
  assert.equal(d.options.clusterDomain, 'example.com');
  // `--` is taken out before flag parsing, as the original does, so it is never a flag's value.
  assert.throws(() => parseNannyOptions(['-configDir', '--', 'x']), /flag needs an argument: -configDir/);
});

test('flags: errors name the flag; -help prints the original summary', () => {
  assert.throws(() => parseNannyOptions(['-syncInterval=10']), (e: unknown) => e instanceof FlagError && /syncInterval/.test(e.message));
  assert.throws(() => parseNannyOptions(['-restartDnsmasq=yes']), /invalid boolean value "yes" for -restartDnsmasq/);
  assert.throws(() => parseNannyOptions(['-nope']), /unknown flag: -nope/);
  assert.throws(() => parseNannyOptions(['-kubednsServer=1.2.3.4:99999']), /kubednsServer/);
  assert.throws(() => parseNannyOptions(['--cache-size=1000']), /unknown flag: --cache-size/);
  assert.throws(() => parseNannyOptions(['stray']), /unexpected argument "stray": arguments for dnsmasq go after "--"/);
  const h = parseNannyOptions(['-help']);
  assert.equal(h.kind, 'help');
  if (h.kind === 'help') {
    assert.match(h.text, /Manages the dnsmasq daemon, handles configuration given by the ConfigMap\./);
    assert.match(h.text, /--configDir string/);
    assert.match(h.text, /--reloadGracePeriod duration/);
  }
});

test('-version answers the package version (the images run it), -version=raw as a JSON string', () => {
  assert.deepEqual(parseNannyOptions(['--version']), { kind: 'version', raw: false });
  assert.deepEqual(parseNannyOptions(['-version=raw']), { kind: 'version', raw: true });
  assert.equal(parseNannyOptions(['-version=false']).kind, 'options');
  assert.throws(() => parseNannyOptions(['-version=yes']), /-version: want true, false or raw/);
});
