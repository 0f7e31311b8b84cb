// dnsmasq's command line: the operator's arguments (after `--`) plus what the nanny needs, and
// the few facts the nanny reads back out of the operator's arguments. Pure.
export interface GeneratedPaths {
  /** Absolute path of our --servers-file. */
  serversFile: string;
  /** Absolute path of our --hostsdir (the ConfigMap's hosts, when few). */
  hostsDir: string;
  /** Absolute path of our --addn-hosts file (the ConfigMap's hosts, when many: hosts-file.ts). */
  largeHostsFile: string;
}

const FOREGROUND = ['-k', '--keep-in-foreground', '-d', '--no-daemon'];
const LOG_FACILITY = ['-8', '--log-facility'];
const NO_RESOLV = ['-R', '--no-resolv'];

/** True when `args` holds long option `--long` (`--long`, `--long=x`) or short option `-s`. */
function hasOption(args: readonly string[], names: readonly string[]): boolean {
  return args.some((a) => names.some((n) => a === n || (n.startsWith('--') && a.startsWith(`${n}=`)) || (!n.startsWith('--') && a.startsWith(n) && a.length > 2)));
}

/**
 * The values of an option with a required argument (`--long=v`, `--long v`, `-sv`, `-s v`),
 * in order. getopt's abbreviations (`--addn-h`) are not recognised.
 */
export function optionValues(args: readonly string[], long: string, short?: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === `--${long}` || (short && a === `-${short}`)) {
      if (i + 1 < args.length) out.push(args[++i]!);
    } else if (a.startsWith(`--${long}=`)) out.push(a.slice(long.length + 3));
    else if (short && a.startsWith(`-${short}`) && !a.startsWith('--')) out.push(a.slice(2));
  }
  return out;
}

/** Problems with the operator's dnsmasq arguments that the nanny cannot work around. */
export function argumentConflicts(passthrough: readonly string[]): string[] {
  const problems: string[] = [];
  if (optionValues(passthrough, 'servers-file').length > 0) {
    problems.push(
      '--servers-file is managed by dnsmasq-nanny (it carries the ConfigMap\'s servers); pass fixed servers with --server instead',
    );
  }
  return problems;
}

/**
 * The argv for the real process: the operator's arguments first (so the original manifest's
 * `--server=/cluster.local/127.0.0.1#10053` lines keep their meaning), then ours. `--no-resolv`
 * always: the nanny writes resolv.conf's nameservers into the servers file itself, so that a
 * ConfigMap change never needs a restart.
 */
export function buildDnsmasqArgs(passthrough: readonly string[], paths: GeneratedPaths): string[] {
  const args = [...passthrough];
  if (!hasOption(passthrough, FOREGROUND)) args.push('--keep-in-foreground');
  // The relay of dnsmasq's log into ours needs its log on stderr; a container has no syslog.
  if (!hasOption(passthrough, LOG_FACILITY)) args.push('--log-facility=-');
  args.push('--no-resolv', `--servers-file=${paths.serversFile}`, `--hostsdir=${paths.hostsDir}`, `--addn-hosts=${paths.largeHostsFile}`);
  return args;
}

/** Files and directories given with --addn-hosts/-H: dnsmasq re-reads them on SIGHUP only. */
export function addnHostsPaths(passthrough: readonly string[]): string[] {
  return optionValues(passthrough, 'addn-hosts', 'H');
}

/**
 * The operator's hosts files and directories to watch and SIGHUP dnsmasq for: --addn-hosts, and
 * --hostsdir too. dnsmasq's inotify follows files written in a --hostsdir, but not a ConfigMap
 * volume mounted there: the kubelet swaps its hidden ..data symlink, and the visible names,
 * symlinks through it, never change. (An edit dnsmasq does see costs one extra cache clear.)
 */
export function watchedHostsPaths(passthrough: readonly string[]): string[] {
  return [...addnHostsPaths(passthrough), ...optionValues(passthrough, 'hostsdir')];
}

/**
 * The resolv.conf whose nameservers stand in for an empty upstreamNameservers: the operator's
 * last --resolv-file/-r (an optional-argument option: only `--resolv-file=x` and `-rx`), else
 * /etc/resolv.conf. Undefined when the operator passed --no-resolv/-R: dnsmasq is to use none
 * (the --no-resolv we add must not bring the node's nameservers back in).
 */
export function resolvFilePath(passthrough: readonly string[]): string | undefined {
  if (hasOption(passthrough, NO_RESOLV)) return undefined;
  let path = '/etc/resolv.conf';
  for (const a of passthrough) {
    if (a.startsWith('--resolv-file=')) path = a.slice('--resolv-file='.length);
    else if (a.startsWith('-r') && a.length > 2 && !a.startsWith('--')) path = a.slice(2);
  }
  return path;
}

