// Flags as the original manifests write them: Go's single dash (the nanny), pflag's double dash
// (kube-dns, sidecar), `_` for `-`, Go booleans, Go durations.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type FlagSpecs, FlagError, KLOG_COMPAT_FLAGS, parseDuration, parseFlags, usage } from '../src/index.js';

const SPECS: FlagSpecs = {
  'dns-port': { type: 'int', help: 'DNS port', default: 53 },
  domain: { type: 'string', help: 'cluster domain', default: 'cluster.local.' },
  restartDnsmasq: { type: 'bool', help: 'restart dnsmasq on change' },
  'config-period': { type: 'duration', help: 'poll period', default: 10_000 },
  probe: { type: 'strings', help: 'probes' },
  nameservers: { type: 'strings', help: 'upstreams', default: ['10.0.0.1'] },
  version: { type: 'optional', help: 'print the version' },
  federations: { type: 'string', help: 'obsolete', hidden: true },
  v: { type: 'int', help: 'verbosity', default: 0, validate: (n: number) => (n < 0 ? 'must be >= 0' : undefined) },
};

const parse = (...argv: string[]) => parseFlags(argv, SPECS);

function flagError(argv: string[], specs: FlagSpecs = SPECS): string {
  try {
    parseFlags(argv, specs);
  } catch (e) {
    assert.ok(e instanceof FlagError, `expected a FlagError, got ${String(e)}`);
    return e.message;
  }
  assert.fail(`expected ${JSON.stringify(argv)} to be rejected`);
}

test('the four spellings -flag=v, -flag v, --flag=v, --flag v give the same value', () => {
  for (const argv of [['-dns-port=10053'], ['-dns-port', '10053'], ['--dns-port=10053'], ['--dns-port', '10053']]) {
    const r = parseFlags(argv, SPECS);
    assert.equal(r.values['dns-port'], 10053, argv.join(' '));
    assert.ok(r.set.has('dns-port'));
  }
});

test('defaults apply to flags not given, and only given flags are marked as set', () => {
  const r = parse('--domain=example.org.');
  assert.equal(r.values['dns-port'], 53);
  assert.equal(r.values['config-period'], 10_000);
  assert.equal(r.values.restartDnsmasq, false);
  assert.deepEqual(r.values.probe, []);
  assert.deepEqual([...r.set], ['domain']);
});

test('_ and - are interchangeable in flag names, either way round', () => {
  assert.equal(parse('--dns_port=5353').values['dns-port'], 5353);
  assert.equal(parse('-config_period', '5s').values['config-period'], 5000);
  const klog = parseFlags(['-log_dir=/tmp', '--log-file-max-size', '10'], KLOG_COMPAT_FLAGS);
  assert.equal(klog.values['log-dir'], '/tmp');
  assert.equal(klog.values['log-file-max-size'], 10);
});

test('Go booleans: bare, =true/=false, =1/=0, =t/=F', () => {
  const b = (...argv: string[]) => parse(...argv).values.restartDnsmasq;
  assert.equal(b('-restartDnsmasq'), true);
  assert.equal(b('-restartDnsmasq=true'), true);
  assert.equal(b('--restartDnsmasq=1'), true);
  assert.equal(b('-restartDnsmasq=T'), true);
  assert.equal(b('-restartDnsmasq=True'), true);
  assert.equal(b('-restartDnsmasq=false'), false);
  assert.equal(b('-restartDnsmasq=0'), false);
  assert.equal(b('-restartDnsmasq=FALSE'), false);
  assert.equal(b('-restartDnsmasq', '-restartDnsmasq=false'), false, 'the last one wins');
  // A boolean never takes the next argument: Go and pflag read `-restartDnsmasq false` as true plus
  // a stray `false` (Go then stops parsing). Refused, saying what was meant and how to write it.
  assert.equal(flagError(['-restartDnsmasq', 'false']), '-restartDnsmasq false: this flag takes its value only after "=" (-restartDnsmasq=false); alone it means true');
  assert.equal(flagError(['--restartDnsmasq', 'true', '--domain=x.']), '--restartDnsmasq true: this flag takes its value only after "=" (--restartDnsmasq=true); alone it means true');
  assert.equal(parse('-restartDnsmasq', '--domain=x.').values.restartDnsmasq, true);
});

test('a bad boolean value is a FlagError naming the flag and the value', () => {
  assert.equal(flagError(['-restartDnsmasq=yes']), 'invalid boolean value "yes" for -restartDnsmasq');
  assert.match(flagError(['--restartDnsmasq=']), /invalid boolean value "" for -restartDnsmasq/);
});

test('an unknown flag is a FlagError naming it', () => {
  assert.equal(flagError(['--dns-port=1', '--nope=3']), 'unknown flag: --nope');
  assert.equal(flagError(['-kubednsServer', 'x']), 'unknown flag: -kubednsServer');
});

test('a flag without its argument is a FlagError naming it', () => {
  assert.equal(flagError(['--domain']), 'flag needs an argument: --domain');
  assert.equal(flagError(['-dns-port=53', '-config-period']), 'flag needs an argument: -config-period');
});

test('bad integers and validator failures are FlagErrors naming flag and value', () => {
  assert.equal(flagError(['--dns-port=53x']), 'invalid value "53x" for --dns-port: not an integer');
  assert.equal(flagError(['--dns-port', '']), 'invalid value "" for --dns-port: not an integer');
  assert.equal(flagError(['--v=-1']), 'invalid value "-1" for --v: must be >= 0');
  assert.equal(parse('--v', '4').values.v, 4);
});

test("pflag's shorthand with its value attached: -v4 is -v=4; other unknown single-dash names still fail", () => {
  assert.equal(parse('-v4').values.v, 4);
  assert.equal(parse('-v=4').values.v, 4);
  assert.equal(flagError(['-v-1']), 'invalid value "-1" for --v: must be >= 0');
  assert.equal(flagError(['-vx']), 'invalid value "x" for --v: not an integer');
  assert.equal(flagError(['--v4']), 'unknown flag: --v4');
  assert.equal(flagError(['-nope']), 'unknown flag: -nope');
});

test('a repeated list flag collects every value in order; its first value replaces the default', () => {
  const r = parse('--probe=kubedns,127.0.0.1:10053,a.b,5,SRV', '--probe', 'dnsmasq,127.0.0.1:53,c.d,5,A');
  assert.deepEqual(r.values.probe, ['kubedns,127.0.0.1:10053,a.b,5,SRV', 'dnsmasq,127.0.0.1:53,c.d,5,A']);
  assert.deepEqual(parse().values.nameservers, ['10.0.0.1']);
  assert.deepEqual(parse('--nameservers=8.8.8.8', '--nameservers=8.8.4.4').values.nameservers, ['8.8.8.8', '8.8.4.4']);
  // Parsing twice must not leak values from one parse into the other through the shared default.
  assert.deepEqual(parse().values.nameservers, ['10.0.0.1']);
});

test('a repeated scalar flag keeps the last value, as Go does', () => {
  assert.equal(parse('--domain=a.', '--domain=b.').values.domain, 'b.');
});

test('durations: Go syntax in milliseconds; bad ones are FlagErrors naming the flag', () => {
  assert.equal(parseDuration('10s'), 10_000);
  assert.equal(parseDuration('100ms'), 100);
  assert.equal(parseDuration('1m30s'), 90_000);
  assert.equal(parseDuration('1h'), 3_600_000);
  assert.equal(parseDuration('1.5s'), 1500);
  assert.equal(parseDuration('0'), 0);
  assert.equal(parseDuration('0s'), 0);
  assert.equal(parseDuration('500us'), 0.5);
  // capped where a Node timer would overflow and fire at once: 24.8 days is never
  assert.equal(parseDuration('1000h'), 2_147_483_647);
  assert.equal(parseDuration('596h31m23s647ms'), 2_147_483_647);
  for (const bad of ['10', '', 's', '10x', '1m30', 'ten seconds', '10 s']) {
    assert.throws(() => parseDuration(bad), FlagError, JSON.stringify(bad));
  }
  assert.equal(parse('--config-period=1m').values['config-period'], 60_000);
  assert.match(flagError(['--config-period=10']), /^invalid value for --config-period: invalid duration "10"/);
});

test('everything after the first -- passes through verbatim, flags included', () => {
  const r = parseFlags(['-v=2', '-logtostderr', '-restartDnsmasq=true', '--', '-k', '--cache-size=1000', '--', '--log-facility=-'], {
    ...SPECS,
    ...KLOG_COMPAT_FLAGS,
  });
  assert.equal(r.values.restartDnsmasq, true);
  assert.equal(r.values.v, 2);
  assert.deepEqual(r.passthrough, ['-k', '--cache-size=1000', '--', '--log-facility=-']);
  assert.deepEqual(parse('--domain=x.').passthrough, []);
});

test('arguments that are not flags are positional', () => {
  assert.deepEqual(parse('a', '-', '--domain=x.', 'b').positional, ['a', '-', 'b']);
});

test('the klog flags of the original manifests are accepted', () => {
  const specs = { ...SPECS, ...KLOG_COMPAT_FLAGS };
  const r = parseFlags(
    ['--logtostderr', '--alsologtostderr=false', '--log_dir=/var/log', '--stderrthreshold=2', '--vmodule=a=3', '--log-flush-frequency=5s', '--skip_headers', '--one_output=true', '--add_dir_header', '--log_backtrace_at=x.go:1', '--log_file=/f', '--skip-log-headers'],
    specs,
  );
  assert.equal(r.values['log-flush-frequency'], 5000);
  assert.equal(r.values.alsologtostderr, false);
});

test('-h and --help ask for help, and usage lists visible flags with defaults', () => {
  assert.equal(parse('-h').help, true);
  assert.equal(parse('--help').help, true);
  assert.equal(parse().help, false);
  const text = usage('kube-dns', 'Serves cluster DNS.', SPECS);
  assert.match(text, /^Usage of kube-dns:\nServes cluster DNS\.\n/);
  assert.match(text, /--dns-port int\n {8}DNS port \(default 53\)/);
  assert.match(text, /--restartDnsmasq\n/);
  assert.doesNotMatch(text, /federations/, 'hidden flags are not listed');
});

test('--help shows a duration default as Go does, in a form the flag itself accepts', () => {
  const specs: FlagSpecs = {
    'config-period': { type: 'duration', help: 'poll period', default: 10_000 },
    lameduck: { type: 'duration', help: 'lameduck', default: 5000 },
    grace: { type: 'duration', help: 'grace', default: 1500 },
    tick: { type: 'duration', help: 'tick', default: 250 },
    slow: { type: 'duration', help: 'slow', default: 90_000 },
    hourly: { type: 'duration', help: 'hourly', default: 3_600_000 },
    off: { type: 'duration', help: 'off', default: 0 },
  };
  const text = usage('kube-dns', 'Serves cluster DNS.', specs);
  const shown = Object.fromEntries([...text.matchAll(/--([\w-]+) duration\n.*\(default (\S+)\)/g)].map((m) => [m[1]!, m[2]!]));
  assert.deepEqual(shown, { 'config-period': '10s', lameduck: '5s', grace: '1.5s', tick: '250ms', slow: '1m30s', hourly: '1h0m0s', off: '0s' });
  // an operator copies the default from --help into a manifest: the same value comes back
  for (const [name, value] of Object.entries(shown)) assert.equal(parseFlags([`--${name}=${value}`], specs).values[name], specs[name]!.default, name);
});

test('an optional-value flag is "true" when bare and takes only an attached value', () => {
  assert.equal(parse('--version').values.version, 'true');
  assert.equal(parse('--version=raw').values.version, 'raw');
  assert.equal(flagError(['--version', 'raw']), '--version raw: this flag takes its value only after "=" (--version=raw); alone it means true');
  assert.equal(parse().values.version, undefined);
});
