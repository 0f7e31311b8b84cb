// The nanny's wiring: ConfigMap directory → servers file and hosts file → a supervised dnsmasq.
import { EventEmitter } from 'node:events';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigDirSource, type HostsEntry, type KubeDnsConfig, type Logger, parseResolvConf } from '@kube-dns/config';
import { argumentConflicts, buildDnsmasqArgs, resolvFilePath, watchedHostsPaths } from './dnsmasq-args.js';
import { DnsmasqProcess, type ExitInfo } from './dnsmasq-process.js';
import { TEMPORARY_FILE, writeFileAtomic } from './files.js';
import { HOSTS_FILE_NAME, HOSTSDIR_MAX_NAMES, hostsFileText, LARGE_HOSTS_FILE_NAME, namesGainingAddresses, namesIn } from './hosts-file.js';
import type { NannyOptions } from './options.js';
import { ServersReloader } from './reload.js';
import { resolveStubDomains } from './resolve-names.js';
import { type ServerAddress, serverLines, serversFileText, toServerAddress } from './servers-file.js';
import { Supervisor } from './supervisor.js';
import { LivenessProbe, livenessTarget } from './liveness.js';
import { type HostsWatcher, watchAddnHosts } from './watch-hosts.js';

export class StartupError extends Error {
  override name = 'StartupError';
}

/** While a stub server name does not resolve, try again this often. */
const UNRESOLVED_RETRY_MS = 2000;

export interface NannyEvents {
  /** dnsmasq cannot be kept running: the process should exit non-zero. */
  fatal: [Error];
  /** dnsmasq ended on its own (not stopped by us); a restart follows unless `fatal` does. */
  dnsmasqExited: [ExitInfo];
  /** dnsmasq was started again after it ended. */
  dnsmasqRestarted: [];
}

export class Nanny extends EventEmitter<NannyEvents> {
  readonly serversFile: string;
  readonly hostsDir: string;
  readonly largeHostsFile: string;
  private source: ConfigDirSource | undefined;
  private supervisor: Supervisor | undefined;
  private reloader: ServersReloader | undefined;
  private hostsWatcher: HostsWatcher | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private logTimer: NodeJS.Timeout | undefined;
  private liveness: LivenessProbe | undefined;
  /** The config dnsmasq is serving (changes only with -restartDnsmasq). */
  private applied: KubeDnsConfig | undefined;
  /** What our --hostsdir file and our --addn-hosts file hold (undefined: not written yet). */
  private lastDirText: string | undefined;
  private lastLargeText: string | undefined;
  /** The entries of the hosts file last written (to tell what an edit adds). */
  private lastHosts: readonly HostsEntry[] = [];
  private work: Promise<void> = Promise.resolve();
  private unresolved = 0;
  /** Where stub server names last resolved to (resolve-names.ts). */
  private stubAddresses = new Map<string, string>();
  private resolvWarned = false;
  /** The config whose cluster-domain stub was last warned about. */
  private clusterStubWarned: KubeDnsConfig | undefined;
  private stopped = false;

  constructor(
    private readonly opts: NannyOptions,
    private readonly log: Logger,
  ) {
    super();
    this.serversFile = join(opts.stateDir, 'servers');
    this.hostsDir = join(opts.stateDir, 'hosts.d');
    this.largeHostsFile = join(opts.stateDir, LARGE_HOSTS_FILE_NAME);
  }

  get dnsmasqPid(): number | undefined {
    return this.supervisor?.current?.pid;
  }

  async start(): Promise<void> {
    const { opts, log } = this;
    const conflicts = argumentConflicts(opts.dnsmasqArgs);
    if (conflicts.length) throw new StartupError(conflicts.join('; '));
    await this.prepareStateDir();

    const source = new ConfigDirSource({ dir: opts.configDir, periodMs: opts.syncIntervalMs, log });
    this.source = source;
    // Listen from the start: a change that lands while dnsmasq is being set up must not be missed.
    let latest: KubeDnsConfig | undefined;
    let starting = true;
    source.on('config', (config) => (starting ? (latest = config) : this.onConfig(config)));
    const initial = await source.start();
    this.applied = initial;
    const lines = await this.desiredLines(initial);
    await writeFileAtomic(this.serversFile, serversFileText(lines));
    await this.writeHosts(initial);

    const args = buildDnsmasqArgs(opts.dnsmasqArgs, { serversFile: this.serversFile, hostsDir: this.hostsDir, largeHostsFile: this.largeHostsFile });
    log.info({ exec: opts.dnsmasqExec, args }, 'starting dnsmasq');
    const supervisor = new Supervisor({ spawn: () => new DnsmasqProcess({ exec: opts.dnsmasqExec, args, log, hostsFile: this.largeHostsFile }), log });
    this.supervisor = supervisor;
    supervisor.on('exited', (info) => this.stopped || this.emit('dnsmasqExited', info));
    supervisor.on('started', ({ restart }) => restart && this.emit('dnsmasqRestarted'));
    supervisor.on('fatal', (e) => this.emit('fatal', new Error(`${e.message} (dnsmasq command: ${[opts.dnsmasqExec, ...args].join(' ')})`)));
    this.reloader = new ServersReloader(lines, {
      write: (l) => writeFileAtomic(this.serversFile, serversFileText(l)),
      signal: () => supervisor.reload(),
      graceMs: opts.reloadGracePeriodMs,
      log,
    });
    // Ready before dnsmasq's first read of the files, so that no edit falls between the two: an
    // edit during chokidar's initial scan raises no event, and would wait for the poll.
    this.hostsWatcher = watchAddnHosts(watchedHostsPaths(opts.dnsmasqArgs), () => supervisor.reload(), log, { pollMs: opts.syncIntervalMs });
    await this.hostsWatcher.ready;
    if (this.stopped) return;
    supervisor.start();
    const target = livenessTarget(opts.dnsmasqArgs);
    if (opts.livenessIntervalMs > 0 && target) {
      this.liveness = new LivenessProbe({
        target,
        intervalMs: opts.livenessIntervalMs,
        failures: opts.livenessFailures,
        timeoutMs: Math.min(1000, opts.livenessIntervalMs),
        log,
        running: () => (supervisor.current?.ready ? { pid: supervisor.current.pid } : undefined),
        onHung: (pid, why) => supervisor.killHung(pid, why),
      });
      this.liveness.start();
    }

    starting = false;
    if (latest && latest !== initial) this.onConfig(latest);
    this.scheduleRefresh();
    if (opts.logIntervalMs > 0) {
      this.logTimer = setInterval(() => supervisor.signal('SIGUSR1'), opts.logIntervalMs);
      this.logTimer.unref();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.liveness?.stop();
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    if (this.logTimer) clearInterval(this.logTimer);
    this.reloader?.stop();
    await Promise.allSettled([this.source?.stop(), this.hostsWatcher?.close()]);
    await this.supervisor?.stop();
  }

  /**
   * Our state directory holds only what we generate: start from a clean hosts directory, without
   * the temporary files of a nanny that died mid-write (the emptyDir outlives a container restart).
   */
  private async prepareStateDir(): Promise<void> {
    try {
      await mkdir(this.hostsDir, { recursive: true });
      for (const name of await readdir(this.hostsDir)) {
        if (name !== HOSTS_FILE_NAME) await rm(join(this.hostsDir, name), { recursive: true, force: true });
      }
      for (const name of await readdir(this.opts.stateDir)) if (TEMPORARY_FILE.test(name)) await rm(join(this.opts.stateDir, name), { force: true });
    } catch (e) {
      // The usual cause is a manifest edit: the emptyDir mounted there removed or made read-only,
      // on a read-only root filesystem. Say so in the one line the pod's log shows.
      const code = (e as NodeJS.ErrnoException).code;
      const hint = code === 'EROFS' || code === 'EACCES' || code === 'EPERM' || code === 'ENOENT' ? ': mount a writable volume there (an emptyDir), the root filesystem is read-only' : '';
      throw new StartupError(`cannot prepare the state directory ${this.opts.stateDir} (-stateDir): ${(e as Error).message}${hint}`);
    }
  }

  private onConfig(config: KubeDnsConfig): void {
    if (this.stopped) return;
    if (!this.opts.restartDnsmasq) {
      this.log.warn({ version: config.version }, 'Not applying the new configuration to dnsmasq (-restartDnsmasq=false)');
      return;
    }
    this.applied = config;
    this.enqueue(async () => {
      await this.writeHosts(config);
      if (config !== this.applied) return; // a newer config is queued behind us
      await this.reloader!.apply(await this.desiredLines(config));
    });
  }

  /**
   * Stub server names and resolv.conf can change under an unchanged ConfigMap: follow them. And
   * a hosts write that failed (the state volume full, say) is tried again, not left behind the
   * servers.
   */
  private scheduleRefresh(): void {
    if (this.stopped) return;
    const delay = this.unresolved > 0 ? Math.min(UNRESOLVED_RETRY_MS, this.opts.syncIntervalMs) : this.opts.syncIntervalMs;
    this.refreshTimer = setTimeout(() => {
      const config = this.applied;
      this.enqueue(async () => {
        if (!config || config !== this.applied) return;
        await this.writeHosts(config);
        await this.reloader!.apply(await this.desiredLines(config));
      });
      void this.work.then(() => this.scheduleRefresh());
    }, delay);
    this.refreshTimer.unref();
  }

  private enqueue(job: () => Promise<void>): void {
    this.work = this.work.then(job).catch((e: unknown) => {
      this.log.error({ err: (e as Error).message }, 'cannot apply the configuration to dnsmasq; it keeps its current one');
    });
  }

  /**
   * The ConfigMap's hosts into our --hostsdir file (few: served without a signal) or our
   * --addn-hosts file (many, hosts-file.ts: a SIGHUP), the other one emptied. The file gaining
   * the names is written first, so that no name is missing in between.
   */
  private async writeHosts(config: KubeDnsConfig): Promise<void> {
    const large = namesIn(config.hosts) > HOSTSDIR_MAX_NAMES;
    const text = hostsFileText(config.hosts);
    const none = hostsFileText([]);
    const dirText = large ? none : text;
    const largeText = large ? text : none;
    if (dirText === this.lastDirText && largeText === this.lastLargeText) return;
    const updating = this.lastDirText !== undefined;
    const writeDir = async () => {
      if (dirText === this.lastDirText) return;
      await writeFileAtomic(join(this.hostsDir, HOSTS_FILE_NAME), dirText);
      this.lastDirText = dirText;
      // a name given a new address may have an upstream answer in dnsmasq's cache (hosts-file.ts)
      if (updating && !large && namesGainingAddresses(this.lastHosts, config.hosts).length > 0) this.supervisor?.reload();
    };
    const writeLarge = async () => {
      if (largeText === this.lastLargeText) return;
      await writeFileAtomic(this.largeHostsFile, largeText);
      this.lastLargeText = largeText;
      this.supervisor?.reload(); // none yet at start: dnsmasq reads the file as it starts
    };
    if (large) {
      await writeLarge();
      await writeDir();
    } else {
      await writeDir();
      await writeLarge();
    }
    this.lastHosts = config.hosts;
    if (updating) this.log.info({ entries: config.hosts.length, file: large ? this.largeHostsFile : 'hosts.d' }, 'hosts from the ConfigMap updated');
  }

  /** The servers file's lines for `config`: stub domains (names resolved), then the upstreams. */
  private async desiredLines(config: KubeDnsConfig): Promise<string[]> {
    const { opts, log } = this;
    // the cluster domain is kube-dns's (the manifest's --server=/cluster.local/...): a server line
    // of the ConfigMap for it would have dnsmasq ask both, and take the answer that comes first
    const stubDomains = new Map([...config.stubDomains].filter(([d]) => d !== opts.clusterDomain));
    if (stubDomains.size < config.stubDomains.size && this.clusterStubWarned !== config) {
      this.clusterStubWarned = config; // once per ConfigMap load, not at every refresh
      log.warn({ key: 'stubDomains', domain: opts.clusterDomain }, `stubDomains: ${opts.clusterDomain} is the cluster domain: ignored, its names go to kube-dns (as kube-dns itself ignores it)`);
    }
    const stubs = await resolveStubDomains(stubDomains, {
      kubednsServer: opts.kubednsServer,
      clusterDomain: opts.clusterDomain,
      log,
      lastKnown: this.stubAddresses,
    });
    this.unresolved = stubs.failures.length;
    this.stubAddresses = stubs.addresses;
    const upstreams: ServerAddress[] = config.upstreamNameservers.length
      ? config.upstreamNameservers.map((ns) => toServerAddress(ns))
      : await this.resolvConfServers();
    return serverLines({ stubDomains: stubs.stubDomains, upstreams });
  }

  /** What dnsmasq would have used without --no-resolv (the pod's dnsPolicy: Default file). */
  private async resolvConfServers(): Promise<ServerAddress[]> {
    const path = resolvFilePath(this.opts.dnsmasqArgs);
    if (path === undefined) return []; // the operator's --no-resolv: their --server lines only
    try {
      const servers = parseResolvConf(await readFile(path, 'utf8')).map((ns) => toServerAddress(ns));
      if (servers.length === 0 && !this.resolvWarned) {
        this.log.warn({ path }, 'no upstreamNameservers in the ConfigMap and no nameserver in the resolv.conf: names outside the stub domains get no answer');
      }
      this.resolvWarned = servers.length === 0;
      return servers;
    } catch (e) {
      if (!this.resolvWarned) this.log.warn({ path, err: (e as Error).message }, 'cannot read the resolv.conf for default upstream servers');
      this.resolvWarned = true;
      return [];
    }
  }
}
