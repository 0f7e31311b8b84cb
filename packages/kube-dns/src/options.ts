// kube-dns flags: the original's (kubernetes/dns cmd/kube-dns/app/options) plus --ttl, --pods and --healthz-bind-address.
import { isIP } from 'node:net';
import { FlagError, KLOG_COMPAT_FLAGS, type FlagSpecs, isDns1123Label, parseFederations, parseFlags, parseIpNameserver, type Nameserver, versionRequest } from '@kube-dns/config';
import type { PodMode } from './records/types.js';
import { parseZoneOptions, ZONE_FLAGS, type ZoneOptions } from './zones/options.js';

export const FLAGS: FlagSpecs = {
  domain: { type: 'string', default: 'cluster.local.', help: 'domain under which to create names' },
  'dns-bind-address': { type: 'string', default: '0.0.0.0', help: 'address on which to serve DNS requests (UDP and TCP)' },
  'dns-port': { type: 'int', default: 53, help: 'port on which to serve DNS requests' },
  'healthz-port': { type: 'int', default: 8081, help: 'port on which to serve /readiness, /healthz, /cache and /metrics' },
  'healthz-bind-address': { type: 'string', default: '0.0.0.0', help: 'address for the healthz port (and PROMETHEUS_PORT)' },
  'kubecfg-file': { type: 'string', default: '', help: 'location of the kubecfg file for access to the kubernetes master service' },
  'kube-master-url': { type: 'string', default: '', help: 'URL to reach the kubernetes master; env variables are expanded ($VAR, ${VAR})' },
  nameservers: { type: 'string', default: '', help: 'comma-separated upstream nameservers ip[:port]; used when no --config-dir is given' },
  federations: { type: 'string', default: '', help: 'obsolete: validated (name=domain,...) and ignored', hidden: true },
  'config-map-namespace': { type: 'string', default: 'kube-system', help: 'namespace of --config-map' },
  'config-map': { type: 'string', default: '', help: 'not supported: mount the ConfigMap and use --config-dir (the official manifest does)' },
  'config-dir': { type: 'string', default: '', help: 'directory of the mounted kube-dns ConfigMap' },
  'config-period': { type: 'duration', default: 10_000, help: 'poll period of --config-dir (file changes are also picked up at once); 0: no poll, file changes only' },
  'initial-sync-timeout': { type: 'duration', default: 60_000, help: 'warn loudly when the first sync with the API server takes longer (we keep trying rather than exit)' },
  profiling: { type: 'bool', default: false, help: 'accepted for compatibility; ignored' },
  version: { type: 'optional', help: 'print the version and exit (--version=raw: only the version string)' },
  v: { type: 'int', default: 2, help: 'log verbosity (0-2 info, 3-5 debug, 6+ trace)' },
  ttl: { type: 'int', default: 30, help: 'TTL of the records, in seconds (also the SOA minimum for negative caching)' },
  'response-cache-entries': { type: 'int', default: 20_000, help: 'encoded replies kept for repeated questions (0 disables the cache)' },
  'response-cache-bytes': { type: 'int', default: 16 * 1024 * 1024, help: 'memory the response cache may use, in bytes (replies, keys and bookkeeping; 0 disables the cache)' },
  wildcards: { type: 'bool', default: false, help: 'answer the legacy `*` wildcard names (*.<ns>.svc, <svc>.*.svc, *._tcp...) with the union of the matching Services\' records (ExternalName left out), as CoreDNS did; off as in CoreDNS. On, a wildcard visits at most 256 services and answers at most 64 records' },
  // --- query log (querylog/query-log.ts)
  'log-queries': { type: 'optional', default: '0', help: 'log this share (0-1) of queries as JSON lines on stdout: client, name, type, rcode, duration, cached (--log-queries alone: every query; default 0: off)' },
  'log-queries-max-rate': { type: 'int', default: 100, help: 'with --log-queries: at most this many lines per second (a flood cannot fill the disk)' },
  // ---
  pods: { type: 'string', default: 'insecure', help: 'pod records: insecure (any a-b-c-d.<ns>.pod name), verified (only existing pods; watches Pods), disabled' },
  // --- autopath (autopath/autopath.ts)
  autopath: { type: 'bool', default: false, help: "complete a pod's search path on the server (as CoreDNS's autopath): <name>.<ns>.svc.<zone> that does not exist gets a CNAME to the first search name that does, or to <name> from upstream. Needs dnsmasq --add-subnet=32,128 in front (the asking pod's IP) and watches Pods" },
  // ---
  // --- reliability (docs/reliability.md)
  'max-concurrent-forwards': { type: 'int', default: 1000, help: 'forwards in flight at most (as CoreDNS forward max_concurrent); beyond it SERVFAIL at once, within --overflow-servfails-per-second' },
  'overflow-servfails-per-second': { type: 'int', default: 1000, help: 'of the queries over --max-concurrent-forwards, answer this many a second SERVFAIL at once and drop the rest (a flood answered in full would starve the other clients; 0: drop them all)' },
  lameduck: { type: 'duration', default: 5000, help: 'after SIGTERM: fail /readiness but keep answering this long, then exit (a rolling update loses no query)' },
  // --- zone options (zones/options.ts, docs/zones.md)
  ...ZONE_FLAGS,
  // ---
  ...KLOG_COMPAT_FLAGS,
};

export interface KubeDnsOptions {
  /** lower-case, no trailing dot */
  domain: string;
  dnsBindAddress: string;
  dnsPort: number;
  healthzPort: number;
  healthzBindAddress: string;
  kubecfgFile: string;
  kubeMasterUrl: string;
  nameservers: Nameserver[];
  configDir: string;
  configPeriodMs: number;
  initialSyncTimeoutMs: number;
  verbosity: number;
  ttl: number;
  responseCacheEntries: number;
  responseCacheBytes: number;
  wildcards: boolean;
  pods: PodMode;
  /** --log-queries: share of queries logged, 0 = off. */
  logQueries: number;
  logQueriesMaxRate: number;
  /** --version given (and not false): what to print. */
  version?: 'raw' | 'plain';
  help: boolean;
  maxConcurrentForwards: number;
  overflowServfailsPerSecond: number;
  lameduckMs: number;
  /** --autopath */
  autopath: boolean;
  /** The zone options (zones/options.ts), all off by default. */
  zones: ZoneOptions;
  /** --federations named any: validated as the original did, then ignored with a warning (main.ts). */
  federationsGiven: boolean;
}

function port(name: string, v: number, allowZero = false): number {
  if (!Number.isInteger(v) || v < (allowZero ? 0 : 1) || v > 65535) throw new FlagError(`--${name}=${v}: not a port number (1-65535)`);
  return v;
}

/** Parses and validates; throws FlagError naming the flag for anything wrong. */
export function parseOptions(argv: readonly string[]): KubeDnsOptions {
  const f = parseFlags(argv, FLAGS);
  if (f.positional.length) throw new FlagError(`unexpected argument ${JSON.stringify(f.positional[0])}`);
  const v = f.values;
  const domainRaw = String(v.domain).trim().replace(/\.$/, '').toLowerCase();
  const bad = domainRaw.split('.').find((l) => !isDns1123Label(l));
  if (bad !== undefined) throw new FlagError(`--domain=${String(v.domain)}: ${JSON.stringify(bad)} is not a valid DNS-1123 label`);
  if (v['config-map'] && v['config-dir']) throw new FlagError('cannot use both --config-map and --config-dir');
  if (v['config-map']) {
    throw new FlagError('--config-map is not supported: mount the kube-dns ConfigMap as a volume and pass --config-dir (as the official manifest does)');
  }
  const masterUrl = String(v['kube-master-url']);
  if (masterUrl) {
    const expanded = masterUrl.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a, b) => process.env[a ?? b] ?? '');
    let u: URL;
    try {
      u = new URL(expanded);
    } catch {
      throw new FlagError(`--kube-master-url=${masterUrl}: not a URL (want e.g. https://10.0.0.1:443)`);
    }
    if (!u.protocol || !u.host) throw new FlagError(`--kube-master-url=${masterUrl}: needs a scheme and a host`);
  }
  const nameservers: Nameserver[] = [];
  for (const s of String(v.nameservers).split(',').map((x) => x.trim()).filter(Boolean)) {
    const r = parseIpNameserver(s);
    if (!r.ok) throw new FlagError(`--nameservers: ${r.error}`);
    nameservers.push(r.value);
  }
  const pods = String(v.pods);
  if (!['insecure', 'verified', 'disabled'].includes(pods)) throw new FlagError(`--pods=${pods}: must be insecure, verified or disabled`);
  const ttl = Number(v.ttl);
  if (ttl < 0 || ttl > 2_147_483_647) throw new FlagError(`--ttl=${ttl}: must be 0 or more seconds`);
  const bind = String(v['dns-bind-address']);
  if (isIP(bind) === 0) throw new FlagError(`--dns-bind-address=${bind}: not an IP address`);
  const lq = String(v['log-queries']) === 'true' ? 1 : Number(v['log-queries']);
  if (String(v['log-queries']).trim() === '' || !(lq >= 0 && lq <= 1)) throw new FlagError(`--log-queries=${String(v['log-queries'])}: a share of queries from 0 to 1 (e.g. 0.01)`);
  const lqMax = Number(v['log-queries-max-rate']);
  if (!(lqMax >= 1)) throw new FlagError(`--log-queries-max-rate=${lqMax}: at least 1 line per second`);
  const hbind = String(v['healthz-bind-address']);
  if (isIP(hbind) === 0) throw new FlagError(`--healthz-bind-address=${hbind}: not an IP address`);
  const maxConcurrentForwards = Number(v['max-concurrent-forwards']);
  if (!Number.isInteger(maxConcurrentForwards) || maxConcurrentForwards < 1) {
    throw new FlagError(`--max-concurrent-forwards=${maxConcurrentForwards}: must be 1 or more`);
  }
  const overflowServfailsPerSecond = Number(v['overflow-servfails-per-second']);
  if (!Number.isInteger(overflowServfailsPerSecond) || overflowServfailsPerSecond < 0) {
    throw new FlagError(`--overflow-servfails-per-second=${String(v['overflow-servfails-per-second'])}: must be 0 or more`);
  }
  const lameduckMs = Number(v.lameduck);
  if (!(lameduckMs >= 0)) throw new FlagError(`--lameduck=${String(v.lameduck)}: must be 0 or more`);
  const zones = parseZoneOptions(v, domainRaw);
  // Federation (KubeFed v1) is gone; the original still parsed the flag and refused a bad value
  const federations = parseFederations(String(v.federations));
  if (!federations.ok) throw new FlagError(`--federations=${String(v.federations)}: ${federations.errors.join('; ')}`);
  return {
    federationsGiven: federations.value.size > 0,
    autopath: v.autopath === true,
    zones,
    maxConcurrentForwards,
    overflowServfailsPerSecond,
    lameduckMs,
    domain: domainRaw,
    dnsBindAddress: bind,
    dnsPort: port('dns-port', Number(v['dns-port']), true),
    healthzPort: port('healthz-port', Number(v['healthz-port']), true),
    healthzBindAddress: hbind,
    kubecfgFile: String(v['kubecfg-file']),
    kubeMasterUrl: masterUrl,
    nameservers,
    configDir: String(v['config-dir']),
    configPeriodMs: Number(v['config-period']),
    initialSyncTimeoutMs: Number(v['initial-sync-timeout']),
    verbosity: Number(v.v),
    ttl,
    responseCacheEntries: Math.max(0, Number(v['response-cache-entries'])),
    responseCacheBytes: Math.max(0, Number(v['response-cache-bytes'])),
    wildcards: v.wildcards === true,
    pods: pods as PodMode,
    logQueries: lq,
    logQueriesMaxRate: lqMax,
    version: versionRequest(v.version),
    help: f.help,
  };
}
