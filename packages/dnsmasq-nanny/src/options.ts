// The nanny's command line: the original's Go `flag` flags (kubernetes/dns cmd/dnsmasq-nanny), klog's compatibility
// flags, our additions, and everything after `--` handed to dnsmasq verbatim.
import { isAbsolute, resolve } from 'node:path';
import { type FlagSpecs, FlagError, KLOG_COMPAT_FLAGS, isDns1123Subdomain, parseFlags, parseHostPort, usage, versionRequest } from '@kube-dns/config';

export interface NannyOptions {
  configDir: string;
  /** Apply ConfigMap changes to the running dnsmasq (the original restarted it; we reload it). */
  restartDnsmasq: boolean;
  syncIntervalMs: number;
  dnsmasqExec: string;
  kubednsServer: { host: string; port: number };
  /** Send SIGUSR1 (dnsmasq logs its cache statistics) this often; 0 = never. */
  logIntervalMs: number;
  /** Absolute directory for the files we generate (servers file, hosts directory). */
  stateDir: string;
  /** How long removed servers stay listed next to their replacements (see reload.ts). */
  reloadGracePeriodMs: number;
  /** Stub servers given as names under this domain are resolved through kube-dns. */
  clusterDomain: string;
  verbosity: number;
  /** Probe dnsmasq with a DNS query this often; 0 = never. */
  livenessIntervalMs: number;
  /** Probes missed in a row before a hung dnsmasq is killed and restarted. */
  livenessFailures: number;
  /** After SIGTERM: keep dnsmasq answering this long before stopping it. */
  lameduckMs: number;
  /** Arguments after `--`, for dnsmasq. */
  dnsmasqArgs: string[];
  /** Kubeconfig for Kubernetes Events ('' = the pod's service account). */
  kubecfgFile: string;
}

export const SUMMARY =
  'Manages the dnsmasq daemon, handles configuration given by the ConfigMap.\n' +
  'Any arguments given after "--" will be passed directly to dnsmasq itself.';

const nonNegative = (v: number) => (v < 0 ? 'must not be negative' : undefined);

export const NANNY_FLAGS: FlagSpecs = {
  configDir: { type: 'string', default: '/etc/k8s/dns/dnsmasq-nanny', help: 'location of the configuration' },
  restartDnsmasq: {
    type: 'bool',
    default: false,
    help: 'apply configuration changes to the running dnsmasq (a live reload: no restart, no lost queries)',
  },
  syncInterval: {
    type: 'duration',
    default: 10_000,
    help: 'interval to check for configuration updates (file events are followed at once as well)',
    validate: (v: number) => (v <= 0 ? 'must be positive' : undefined),
  },
  dnsmasqExec: { type: 'string', default: '/usr/sbin/dnsmasq', help: 'location of the dnsmasq executable' },
  kubednsServer: {
    type: 'string',
    default: '127.0.0.1:10053',
    help: 'local kubedns instance address for stub domain server names in the cluster domain',
    validate: (v: string) => {
      const r = parseHostPort(v, 53);
      return r.ok ? undefined : r.error;
    },
  },
  logInterval: { type: 'duration', default: 0, help: 'how often to make dnsmasq log its cache statistics (SIGUSR1); 0 = never', validate: nonNegative },
  stateDir: {
    type: 'string',
    default: '/run/dnsmasq-nanny',
    help: 'directory for the files generated for dnsmasq (servers file, hosts directory); created if missing',
  },
  reloadGracePeriod: {
    type: 'duration',
    default: 3000,
    help: 'how long a removed upstream or stub server stays configured next to its replacement, so queries in flight to it are not lost',
    validate: nonNegative,
  },
  clusterDomain: {
    type: 'string',
    default: 'cluster.local',
    help: 'stub domain servers given as names under this domain are resolved through -kubednsServer',
    validate: (v: string) => (isDns1123Subdomain(v.replace(/\.$/, '').toLowerCase()) ? undefined : 'not a valid domain'),
  },
  livenessProbeInterval: {
    type: 'duration',
    default: 2000,
    help: 'ask dnsmasq a DNS question (version.bind CH TXT) this often; a dnsmasq that misses -livenessProbeFailures in a row is killed and restarted; 0 = never',
    validate: nonNegative,
  },
  livenessProbeFailures: { type: 'int', default: 3, help: 'missed liveness probes in a row that make dnsmasq hung', validate: (v: number) => (v < 1 ? 'must be at least 1' : undefined) },
  lameduck: {
    type: 'duration',
    default: 5000,
    help: 'after SIGTERM, keep dnsmasq answering this long (clients and the Service move away) before stopping it',
    validate: nonNegative,
  },
  v: { type: 'int', default: 0, help: 'number for the log level verbosity' },
  version: { type: 'optional', help: 'print version information and quit (--version or --version=raw)' },
  // Events (dnsmasq restarts, on this pod): in a pod the service account is used; this flag is
  // for running outside a cluster. Without POD_NAME in the environment no Event is sent.
  kubecfgFile: { type: 'string', default: '', help: "kubeconfig for Kubernetes Events about dnsmasq restarts (default: the pod's service account)" },
  ...KLOG_COMPAT_FLAGS,
};

/**
 * The original's ExtractDnsmasqArgs: everything after the first literal `--` is for dnsmasq and
 * is removed before flag parsing (so `--` is never taken as a flag's value).
 */
export function extractDnsmasqArgs(argv: readonly string[]): { dnsmasqArgs: string[]; rest: string[] } {
  const i = argv.indexOf('--');
  if (i < 0) return { dnsmasqArgs: [], rest: [...argv] };
  return { dnsmasqArgs: argv.slice(i + 1), rest: argv.slice(0, i) };
}

export type ParseResult = { kind: 'options'; options: NannyOptions } | { kind: 'help'; text: string } | { kind: 'version'; raw: boolean };

export function parseNannyOptions(argv: readonly string[], cwd = process.cwd()): ParseResult {
  const { dnsmasqArgs, rest } = extractDnsmasqArgs(argv);
  const parsed = parseFlags(rest, NANNY_FLAGS);
  if (parsed.help) return { kind: 'help', text: usage('dnsmasq-nanny', SUMMARY, NANNY_FLAGS) };
  if (parsed.positional.length > 0) {
    throw new FlagError(`unexpected argument ${JSON.stringify(parsed.positional[0])}: arguments for dnsmasq go after "--"`);
  }
  const version = versionRequest(parsed.values.version, '-version');
  if (version) return { kind: 'version', raw: version === 'raw' };
  const v = parsed.values;
  const kubedns = parseHostPort(v.kubednsServer as string, 53);
  if (!kubedns.ok) throw new FlagError(kubedns.error);
  const stateDir = v.stateDir as string;
  return {
    kind: 'options',
    options: {
      configDir: v.configDir as string,
      restartDnsmasq: v.restartDnsmasq as boolean,
      syncIntervalMs: v.syncInterval as number,
      dnsmasqExec: v.dnsmasqExec as string,
      kubednsServer: kubedns.value,
      logIntervalMs: v.logInterval as number,
      // dnsmasq changes directory to /: every path we hand it must be absolute.
      stateDir: isAbsolute(stateDir) ? stateDir : resolve(cwd, stateDir),
      reloadGracePeriodMs: v.reloadGracePeriod as number,
      clusterDomain: (v.clusterDomain as string).replace(/\.$/, '').toLowerCase(),
      verbosity: v.v as number,
      livenessIntervalMs: v.livenessProbeInterval as number,
      livenessFailures: v.livenessProbeFailures as number,
      lameduckMs: v.lameduck as number,
      dnsmasqArgs,
      kubecfgFile: v.kubecfgFile as string,
    },
  };
}
