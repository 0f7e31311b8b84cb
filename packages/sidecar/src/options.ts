// The sidecar's command line: the original's pflag flags (kubernetes/dns cmd/sidecar), klog's compatibility
// flags, and --probe-failure-threshold (ours: how many failed probes make a health check fail).
import { isIP } from 'node:net';
import { type FlagSpecs, FlagError, KLOG_COMPAT_FLAGS, parseFlags, usage, versionRequest } from '@kube-dns/config';
import { type ProbeSpec, parseProbeSpec } from './probe-spec.js';

export interface SidecarOptions {
  dnsmasqAddr: string;
  dnsmasqPort: number;
  dnsmasqPollIntervalMs: number;
  probes: ProbeSpec[];
  prometheusAddr: string;
  /** 0 picks a free port (tests). */
  prometheusPort: number;
  prometheusPath: string;
  /** Metric name prefix; '' for none. */
  prometheusNamespace: string;
  /** Consecutive failed probes before /healthcheck/<label> answers 503. */
  probeFailureThreshold: number;
  verbosity: number;
}

export const DEFAULT_OPTIONS: Readonly<SidecarOptions> = {
  dnsmasqAddr: '127.0.0.1',
  dnsmasqPort: 53,
  dnsmasqPollIntervalMs: 5000,
  probes: [],
  prometheusAddr: '0.0.0.0',
  prometheusPort: 10054,
  prometheusPath: '/metrics',
  prometheusNamespace: 'kubedns',
  probeFailureThreshold: 3,
  verbosity: 0,
};

const port = (min: number) => (v: number) => (v < min || v > 65535 ? `must be between ${min} and 65535` : undefined);
const positive = (v: number) => (v < 1 ? 'must be at least 1' : undefined);

export const SIDECAR_FLAGS: FlagSpecs = {
  'dnsmasq-addr': { type: 'string', default: DEFAULT_OPTIONS.dnsmasqAddr, help: 'address that the dnsmasq server is listening on' },
  'dnsmasq-port': { type: 'int', default: DEFAULT_OPTIONS.dnsmasqPort, help: 'port that the dnsmasq server is listening on', validate: port(1) },
  'dnsmasq-poll-interval-ms': {
    type: 'int',
    default: DEFAULT_OPTIONS.dnsmasqPollIntervalMs,
    help: 'interval with which to poll dnsmasq for stats',
    validate: positive,
  },
  probe: {
    type: 'strings',
    default: [],
    help: 'probe the given DNS server with the DNS name and export probe metrics and healthcheck URI. Specified as <label>,<server>,<dns name>[,<interval_seconds>][,<type>]. Healthcheck url will be exported under /healthcheck/<label>. interval_seconds is optional and defaults to 5 seconds. type is one of ANY, A, AAAA, SRV and defaults to ANY. Repeatable.',
    validate: (values: string[]) => {
      const last = values.at(-1) ?? '';
      const r = parseProbeSpec(last);
      if (!r.ok) return r.error;
      if (values.slice(0, -1).some((v) => v.split(',')[0] === r.value.label)) return `probe label ${r.value.label} is used twice`;
      return undefined;
    },
  },
  'prometheus-addr': { type: 'string', default: DEFAULT_OPTIONS.prometheusAddr, help: 'http addr to bind metrics server to' },
  'prometheus-port': { type: 'int', default: DEFAULT_OPTIONS.prometheusPort, help: 'http port to use to export prometheus metrics', validate: port(0) },
  'prometheus-path': {
    type: 'string',
    default: DEFAULT_OPTIONS.prometheusPath,
    help: 'http path used to export metrics',
    validate: (v: string) => (v.startsWith('/') ? undefined : 'must start with "/"'),
  },
  'prometheus-namespace': {
    type: 'string',
    default: DEFAULT_OPTIONS.prometheusNamespace,
    help: 'prometheus metric namespace',
    validate: (v: string) => (v === '' || /^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(v) ? undefined : 'not a valid Prometheus metric name prefix'),
  },
  'probe-failure-threshold': {
    type: 'int',
    default: DEFAULT_OPTIONS.probeFailureThreshold,
    help: 'a /healthcheck/<label> fails after this many consecutive failed probes (or no successful probe within 3 intervals)',
    validate: positive,
  },
  v: { type: 'int', default: 0, help: 'number for the log level verbosity' },
  version: { type: 'optional', help: 'print version information and quit (--version or --version=raw)' },
  ...KLOG_COMPAT_FLAGS,
};

export type ParsedArgs = { kind: 'run'; options: SidecarOptions } | { kind: 'help'; text: string } | { kind: 'version'; raw: boolean };

/** Parses the command line; throws FlagError with a message naming the flag and the problem. */
export function parseSidecarArgs(argv: readonly string[]): ParsedArgs {
  const parsed = parseFlags(argv, SIDECAR_FLAGS);
  if (parsed.help) return { kind: 'help', text: sidecarUsage() };
  if (parsed.positional.length > 0 || parsed.passthrough.length > 0) {
    throw new FlagError(`unexpected arguments: ${[...parsed.positional, ...parsed.passthrough].join(' ')}`);
  }
  const version = versionRequest(parsed.values.version);
  if (version) return { kind: 'version', raw: version === 'raw' };
  const v = parsed.values;
  const probes = (v.probe as string[]).map((p) => {
    const r = parseProbeSpec(p);
    if (!r.ok) throw new FlagError(`invalid value ${JSON.stringify(p)} for --probe: ${r.error}`);
    return r.value;
  });
  return {
    kind: 'run',
    options: {
      // empty: the local system, as Go's net.Dial takes the original's ":53"
      dnsmasqAddr: unbracket(v['dnsmasq-addr'] as string) || '127.0.0.1',
      dnsmasqPort: v['dnsmasq-port'] as number,
      dnsmasqPollIntervalMs: v['dnsmasq-poll-interval-ms'] as number,
      probes,
      prometheusAddr: unbracket(v['prometheus-addr'] as string),
      prometheusPort: v['prometheus-port'] as number,
      prometheusPath: v['prometheus-path'] as string,
      prometheusNamespace: v['prometheus-namespace'] as string,
      probeFailureThreshold: v['probe-failure-threshold'] as number,
      verbosity: v.v as number,
    },
  };
}

/**
 * The original joins an address flag and its port as "%s:%d", so an IPv6 address works there only
 * in brackets ("[::1]"): take that spelling, and the bare one too.
 */
function unbracket(addr: string): string {
  const m = /^\[(.*)\]$/.exec(addr);
  return m && isIP(m[1]!) === 6 ? m[1]! : addr;
}

export function sidecarUsage(): string {
  return usage('sidecar', 'Probes DNS servers and exports dnsmasq and probe metrics and health checks over HTTP.', SIDECAR_FLAGS);
}
