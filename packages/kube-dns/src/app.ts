// Wiring: zone + resolver + server + forwarder + config + list/watch + HTTP. `startKubeDns` is
// what main.ts runs and what the integration tests start in-process.
import type { Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { ConfigDirSource, defaultConfig, formatHostPort, type KubeDnsConfig, type Logger, type Nameserver, parseResolvConf } from '@kube-dns/config';
import { Autopath } from './autopath/autopath.js';
import { registerAutopathMetrics } from './autopath/metrics.js';
import { PodIpIndex } from './autopath/pod-index.js';
import { parseSearchDomains } from './autopath/search.js';
import { chooseUpstreams, stubDomainsInZones } from './forward/upstreams.js';
import { Forwarder } from './forward/forwarder.js';
import { registerForwardCapMetrics } from './forward/metrics.js';
import { KubeDnsMetrics, registerMalformedMetrics, registerTcpMetrics } from './http/metrics.js';
import { createHttpApp, listenHttp, type HttpLimits } from './http/server.js';
import { kubeDnsEventRecorder, reportConfigEvents, reportStubDomainsInZone } from './events/config-events.js';
import { QueryLog } from './querylog/query-log.js';
import { dumpJson } from './records/dump.js';
import { loadKubeConfig } from './kube/kubeconfig.js';
import { KubeSync, type KubeSyncOptions } from './kube/sync.js';
import { Zone } from './records/zone.js';
import type { ZoneWriter } from './records/types.js';
import { AbsentNames } from './resolve/absent.js';
import { resolve } from './resolve/resolve.js';
import type { ResolveOptions } from './resolve/types.js';
import { DnsHandler } from './server/handler.js';
import { TcpListener } from './server/tcp.js';
import { UdpListener } from './server/udp.js';
import { UdpEveryAddress } from './server/udp-addresses.js';
import type { KubeDnsOptions } from './options.js';
import { NamespaceGate } from './zones/namespace-gate.js';
import { namespaceFilter } from './zones/namespace-filter.js';
import { externalZones } from './zones/external.js';
import { SerialClock } from './transfer/serial.js';
import { ZoneTransfer } from './transfer/transfer.js';
import type { TransferAcl } from './transfer/acl.js';
import { LiveZoneOptions } from './zones/live.js';
import { encodeRcode } from './server/encode.js';
import { RCODE } from './server/wire.js';
import { VERSION } from './version.js';
import { DROP } from './server/reply-budget.js';

/** Headless services listing this many endpoints have their view kept built from the initial sync on (Zone.keepLargeHeadlessViews). */
const LARGE_HEADLESS_VIEW = 500;

export interface KubeDnsInstance {
  dnsPort: number;
  httpPort: number;
  metricsPort: number | undefined;
  zone: Zone;
  sync: KubeSync;
  handler: DnsHandler;
  metrics: KubeDnsMetrics;
  /** The config in force (ConfigMap or defaults). */
  config(): KubeDnsConfig;
  /**
   * SIGTERM's first step: /readiness turns 503 (the endpoints controller takes this replica out
   * of the Service) while DNS keeps answering everything that still arrives; stop() follows
   * after the lameduck period.
   */
  enterLameduck(): void;
  readonly inLameduck: boolean;
  /** Stops taking queries, answers those in flight, stops everything. */
  stop(): Promise<void>;
}

export interface StartExtras {
  log: Logger;
  /** PROMETHEUS_PORT of the original: a second HTTP port (all endpoints). */
  metricsPort?: number;
  /** Where /etc/resolv.conf is (tests point elsewhere). */
  resolvConfPath?: string;
  /** Forwarding timeout per server (default 2 s). */
  forwardTimeoutMs?: number;
  skydnsNamespace?: string;
  skydnsSubsystem?: string;
  /** PROMETHEUS_PATH of the original: where the metrics are served (default /metrics). */
  metricsPath?: string;
  /** How often a wildcard bind looks for addresses that came or went (default 5 s). */
  addressRescanMs?: number;
  /** Retry schedule and watch bounds of the API sync (tests shorten them). */
  kubeSync?: Pick<KubeSyncOptions, 'backoff' | 'watchIdleMs' | 'maxRetryAfterMs'>;
  /** Connections at once and idle time of the HTTP ports (defaults: @kube-dns/config's http-limits). */
  http?: HttpLimits;
}

function readResolvConf(path: string, log: Logger): Nameserver[] {
  try {
    return parseResolvConf(readFileSync(path, 'utf8'));
  } catch (e) {
    log.warn({ path, err: (e as Error).message }, 'cannot read resolv.conf: no default upstream nameservers');
    return [];
  }
}

export async function startKubeDns(o: KubeDnsOptions, x: StartExtras): Promise<KubeDnsInstance> {
  const { log } = x;
  const zone = new Zone({ wildcards: o.wildcards });
  // --namespaces / --namespace-labels (zones/): which namespaces are served at all
  const zo = o.zones;
  const gate = zo.namespaceLabels ? new NamespaceGate(zone, zo.namespaceLabels, () => zone.bumpGeneration()) : undefined;
  const servesNamespace = namespaceFilter(zo.namespaces, gate);
  const resolveOpts: ResolveOptions = {
    zone: o.domain,
    ttl: o.ttl,
    pods: o.pods,
    serial: Math.floor(Date.now() / 1000),
    wildcards: o.wildcards,
    ...(servesNamespace && { servesNamespace }),
    ...(zo.ignoreEmptyService && { ignoreEmptyService: true }),
  };
  if (zo.externalZones.length) resolveOpts.external = externalZones(zo.externalZones, zo.externalNs, resolveOpts, zo.externalTtl);
  const resolvConfPath = x.resolvConfPath ?? '/etc/resolv.conf';

  const forwarder = new Forwarder({
    log,
    timeoutMs: x.forwardTimeoutMs ?? 2000,
    clusterZone: o.domain,
    maxConcurrent: o.maxConcurrentForwards,
    overflowRepliesPerSecond: o.overflowServfailsPerSecond,
    resolveClusterName: (name) => {
      const r = resolve(zone, name, 'A', resolveOpts);
      const a = r.answers.find((rr: { type: string }) => rr.type === 'A');
      return a ? String((a as { data: string }).data) : undefined;
    },
  });

  // an ExternalName pointing into a stub domain inside the zone is chased through its servers
  resolveOpts.forwardedInZone = (lname) => forwarder.zoneStubs.any && forwarder.zoneStubs.covers(lname);

  let sync: KubeSync | undefined;
  const isSynced = () => sync?.synced ?? false;
  const metrics: KubeDnsMetrics = new KubeDnsMetrics(
    { skydnsNamespace: x.skydnsNamespace, skydnsSubsystem: x.skydnsSubsystem },
    {
      records: () => {
        const s = zone.stats();
        return { services: s.services, endpoint_slices: s.endpointSlices, endpoints: s.endpoints, pods: s.pods };
      },
      sync: () => (sync ? sync.stats() : {}),
      forwarders: () => forwarder.serverStats(),
      loopsDetected: () => forwarder.loopsDetected,
      loopsActive: () => forwarder.looping.size + forwarder.loopingStubs.size,
      cacheEntries: () => handler.cache.size,
      cacheBytes: () => handler.cache.bytes,
      synced: isSynced,
    },
  );

  registerForwardCapMetrics(metrics.registry, forwarder);

  // The API server's address and credentials: list/watch below, and Events about the ConfigMap
  // from its first load on.
  const kc = loadKubeConfig({ kubecfgFile: o.kubecfgFile || undefined, masterUrl: o.kubeMasterUrl || undefined });
  const events = kubeDnsEventRecorder(kc, log);

  // --- config: ConfigMap directory, or the static --nameservers
  let config = defaultConfig();
  /** The names of the ConfigMap's `hosts` key, which dnsmasq answers (autopath leaves them to it). */
  const hostsNames = new Set<string>();
  let liveZones: LiveZoneOptions | undefined;
  // As the original: --nameservers is the static configuration, used only without --config-dir;
  // with it, an empty upstreamNameservers means resolv.conf.
  const flagServers = o.configDir ? [] : o.nameservers;
  if (o.configDir && o.nameservers.length) log.warn({ nameservers: o.nameservers.map((s) => s.raw) }, '--nameservers is ignored with --config-dir: upstreams come from upstreamNameservers, else resolv.conf');
  // the response cache's clear, once the handler exists (a config applied before has nothing to clear)
  let clearCachedAnswers = (): void => undefined;
  const applyConfig = (c: KubeDnsConfig) => {
    config = c;
    liveZones?.apply(c.zoneOverrides);
    hostsNames.clear();
    for (const h of c.hosts) for (const n of h.names) hostsNames.add(n.toLowerCase().replace(/\.$/, ''));
    const choice = chooseUpstreams(c, flagServers, readResolvConf(resolvConfPath, log), { addresses: [o.dnsBindAddress], port: o.dnsPort });
    for (const r of choice.refused) log.error({ server: r.server.raw }, `refusing upstream nameserver: ${r.reason}`);
    if (choice.servers.length === 0) log.warn({ source: choice.source }, 'no upstream nameservers: names outside the cluster get SERVFAIL');
    forwarder.setUpstreams(choice.servers);
    // a stub domain inside our zone takes its names (dnsmasq's longest match); the zone itself cannot
    const inZone = stubDomainsInZones(c.stubDomains.keys(), [o.domain, ...zo.externalZones]);
    for (const s of inZone) {
      log.warn(
        { key: 'stubDomains', domain: s.domain, zone: s.zone },
        s.forwarded
          ? `stubDomains: ${s.domain} is inside ${s.zone}, a zone kube-dns answers: its names are forwarded to its servers, not answered from the cluster's records (as dnsmasq in front does)`
          : `stubDomains: ${s.domain} is ${s.zone}, a zone kube-dns answers: ignored, the zone's names are answered from the cluster's records`,
      );
    }
    reportStubDomainsInZone(events, inZone);
    const stubs = new Map([...c.stubDomains].filter(([d]) => !inZone.some((s) => s.domain === d && !s.forwarded)));
    const forwardedInZone = inZone.filter((s) => s.forwarded).map((s) => s.domain);
    // cached answers of ExternalNames that point into such a domain change with it
    if (forwardedInZone.join() !== forwarder.zoneStubs.list.join()) clearCachedAnswers();
    forwarder.setStubDomains(stubs, forwardedInZone);
    log.info(
      { upstreams: choice.servers.map((s) => `${s.host}:${s.port}`), source: choice.source, stubDomains: [...stubs.keys()] },
      'forwarding configured',
    );
  };
  let source: ConfigDirSource | undefined;
  if (o.configDir) {
    source = new ConfigDirSource({ dir: o.configDir, periodMs: o.configPeriodMs, log });
    let first = true;
    source.on('config', (c) => {
      if (!first) metrics.configReloads.inc();
      first = false;
      applyConfig(c);
    });
    source.on('rejected', () => metrics.configRejects.inc());
    reportConfigEvents(source, events);
    await source.start();
  } else {
    applyConfig(defaultConfig());
  }

  // --- autopath: the pods' IPs (from the Pods watch) and the node's search domains
  let podIndex: PodIpIndex | undefined;
  let autopath: Autopath | undefined;
  if (o.autopath) {
    podIndex = new PodIpIndex();
    let nodeSearch: string[] = [];
    try {
      nodeSearch = parseSearchDomains(readFileSync(resolvConfPath, 'utf8'));
    } catch {
      // readResolvConf above already said the file is unreadable
    }
    const count = registerAutopathMetrics(metrics.registry);
    autopath = new Autopath({
      zone: o.domain,
      ttl: o.ttl,
      nodeSearch,
      pods: podIndex,
      resolve: (name, qtype, lname) => resolve(zone, name, qtype, resolveOpts, lname),
      stubInZone: forwarder.zoneStubs,
      dnsmasqHosts: hostsNames,
      // over the forward cap autopath answers its plain NXDOMAIN rather than nothing: the query is ours
      forward: (q, lname, transport) => forwarder.forward(q, lname, transport).then((r) => (r === DROP ? undefined : r)),
      count,
      log,
    });
    log.info({ nodeSearch }, 'autopath on: completing search paths of pods identified by the client-subnet option of their dnsmasq');
  }

  // --- zone transfer (--transfer-to or the ConfigMap key transferTo): made on first use
  let transfer: ZoneTransfer | undefined;
  const setTransfer = (acl: TransferAcl | undefined): void => {
    if (acl && !transfer) {
      // the serial must grow with every change from now on, or a secondary keeps its old copy
      const serial = new SerialClock(zone);
      Object.defineProperty(resolveOpts, 'serial', { get: () => serial.current(), enumerable: true, configurable: true });
      resolveOpts.dynamicSerial = true;
      transfer = new ZoneTransfer({ zone, cluster: resolveOpts, external: resolveOpts.external ?? [], log, registry: metrics.registry, serialClock: serial, isSynced, notifySource: o.dnsBindAddress });
      handler?.cache.clear(); // apex SOA answers cached with the fixed serial
    }
    transfer?.setAcl(acl);
    if (acl) log.info({ to: acl.entries, zones: [o.domain, ...zo.externalZones] }, 'zone transfer allowed');
  };

  // --- DNS
  const queryLog = o.logQueries > 0 ? new QueryLog({ rate: o.logQueries, maxPerSecond: o.logQueriesMaxRate, log }) : undefined;
  const handler: DnsHandler = new DnsHandler({
    zone,
    resolve: (name, qtype, lname, budget) => resolve(zone, name, qtype, resolveOpts, lname, budget),
    forwarder,
    stubInZone: forwarder.zoneStubs,
    isSynced,
    log,
    observer: metrics,
    cacheEntries: o.responseCacheEntries,
    cacheBytes: o.responseCacheBytes,
    ...(autopath && { autopath }),
    absent: new AbsentNames(resolveOpts, zone.presence),
    transfer: {
      answer: (query, q, transport, address) => (transfer ? transfer.answer(query, q, transport, address) : encodeRcode(query, q, RCODE.REFUSED)),
    },
    ...(queryLog && { queryLog }),
  });
  // (the zone's content changes too: a new generation moves the SOA serial, so secondaries transfer it again)
  clearCachedAnswers = () => {
    zone.bumpGeneration();
    handler.cache.clear();
  };
  registerMalformedMetrics(metrics.registry, handler.malformed);
  // UDP and TCP on one port. With --dns-port=0 (tests) the number UDP picks may be taken on TCP:
  // then try another number.
  //
  // A wildcard bind (0.0.0.0, the default, or ::) means every address, IPv6 included, as the
  // original's Go listeners take it (an IPv6 cluster's pod IP). UDP binds each address apart
  // (server/udp-addresses.ts: a reply must leave from the address asked). TCP binds 0.0.0.0 and,
  // beside it, [::] with IPV6_V6ONLY, so IPv4 clients keep plain addresses, not ::ffff:-mapped
  // ones; a host without IPv6 is served over IPv4 alone.
  const wildcard = o.dnsBindAddress === '0.0.0.0' || o.dnsBindAddress === '::';
  // 0.0.0.0 asked for IPv4: IPv6 comes as a bonus, and an IPv6 side that cannot be had (no IPv6,
  // or its port held by another process) is skipped with a word, not a failed start
  const ipv6Optional = o.dnsBindAddress === '0.0.0.0';
  const tcpHosts = ipv6Optional ? ['0.0.0.0', '::'] : [o.dnsBindAddress];
  let udp: UdpListener | UdpEveryAddress | undefined;
  let tcp: TcpListener | undefined;
  let dnsPort: number;
  for (let attempt = 0; ; attempt++) {
    try {
      if (wildcard) {
        const every = new UdpEveryAddress(handler, log, { rescanMs: x.addressRescanMs ?? 5000, ipv6Optional });
        udp = every;
        dnsPort = await every.listen(o.dnsPort);
      } else {
        const one = new UdpListener(handler, log);
        udp = one;
        dnsPort = await one.listen(o.dnsBindAddress, o.dnsPort);
      }
      tcp = new TcpListener(handler, log);
      for (const host of tcpHosts) {
        const beside = host === '::' && ipv6Optional;
        try {
          await tcp.listen(host, dnsPort, beside);
        } catch (e) {
          if (!beside) throw e;
          log.warn({ err: (e as Error).message }, 'DNS over TCP is served over IPv4 only: cannot listen on [::]');
        }
      }
      break;
    } catch (e) {
      await Promise.all([udp?.close(0), tcp?.close(0)]).catch(() => undefined);
      const inUse = (e as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (o.dnsPort === 0 && inUse && attempt < 20) continue;
      await source?.stop();
      throw new Error(`cannot serve DNS on ${formatHostPort(o.dnsBindAddress, o.dnsPort)}: ${(e as Error).message}`);
    }
  }
  const tcpListener = tcp;
  registerTcpMetrics(metrics.registry, tcpListener);
  log.info(
    { address: o.dnsBindAddress, port: dnsPort, domain: o.domain, ...(udp instanceof UdpEveryAddress && { udpAddresses: udp.bound }) },
    'serving DNS over UDP and TCP',
  );
  void forwarder.startLoopChecks();
  // ConfigMap keys over the zone flags (zones/live.ts): now, and on every change of the ConfigMap
  // an option that changes answers changes the zone's content: a new generation (and SOA serial,
  // so secondaries transfer it again), and cached answers go
  const optionsChanged = () => {
    zone.bumpGeneration();
    handler.cache.clear();
  };
  liveZones = new LiveZoneOptions({ flags: zo, resolveOpts, log, clearCache: optionsChanged, setTransfer });
  liveZones.apply(config.zoneOverrides);

  // --- HTTP
  let syncStarted = 0;
  let lameduck = false;
  const app = createHttpApp({
    isSynced: () => !lameduck && isSynced(),
    notReadyReason: () =>
      lameduck
        ? 'shutting down (lameduck): still answering, but take this replica out of the Service'
        : `waiting for the first sync with the API server (${Math.round((Date.now() - syncStarted) / 1000)} s so far)${sync?.pending() ? `: ${sync.pending()}` : ''}`,
    dump: () => dumpJson(zone, resolveOpts),
    dumpReady: isSynced,
    registry: metrics.registry,
    version: VERSION,
    metricsPath: x.metricsPath,
  });
  const servers: Server[] = [await listenHttp(app, o.healthzBindAddress, o.healthzPort, log, 'healthz HTTP', x.http)];
  if (x.metricsPort !== undefined) {
    // a port for metrics alone taken by another process (hostNetwork) costs the metrics, not DNS:
    // the original's skydns served them from a goroutine whose listen error it dropped
    try {
      servers.push(await listenHttp(app, o.healthzBindAddress, x.metricsPort, log, 'metrics HTTP', x.http));
    } catch (e) {
      log.error({ err: (e as Error).message }, 'no metrics HTTP (PROMETHEUS_PORT): DNS and the healthz port go on; /metrics is also served there');
    }
  }

  // --- list/watch
  // autopath reads the same Pods watch: one writer that feeds both (after the namespace gate, if any)
  sync = new KubeSync({
    kc,
    zone: podIndex ? teePods(gate ?? zone, podIndex, o.pods === 'verified') : (gate ?? zone),
    watchPods: o.pods === 'verified' || o.autopath,
    sliceConversion: { podNames: zo.endpointPodNames },
    serviceConversion: { external: zo.externalZones.length > 0 },
    namespaces: zo.namespaces,
    ...(zo.labels && { serviceLabels: zo.labels }),
    ...(gate && { namespaceGate: gate }),
    log,
    ...x.kubeSync,
  });
  syncStarted = Date.now();
  sync.once('synced', () => {
    // before the first cluster query is answered (the listeners run in the tick that makes the
    // replica ready), so that none pays for a large headless service's whole view
    const t = Date.now();
    const views = zone.keepLargeHeadlessViews(resolveOpts.zone, LARGE_HEADLESS_VIEW);
    if (views > 0) log.info({ views, ms: Date.now() - t, minEndpoints: LARGE_HEADLESS_VIEW }, 'built the views of the large headless services');
    log.info({ ms: Date.now() - syncStarted, ...zone.stats() }, 'initial sync with the API server done: ready');
  });
  // stub servers named inside the cluster zone have an address only now
  sync.once('synced', () => void forwarder.probeStubsAgain());
  // 0: no reminder (an interval of 0 would log every millisecond)
  const syncWarn =
    o.initialSyncTimeoutMs > 0
      ? setInterval(() => {
          if (isSynced()) return clearInterval(syncWarn);
          log.error(
            { waitedSeconds: Math.round((Date.now() - syncStarted) / 1000), pending: sync?.pending() },
            'still no initial sync with the API server: cluster names get SERVFAIL and /readiness is 503 until it succeeds; still trying',
          );
        }, o.initialSyncTimeoutMs)
      : undefined;
  syncWarn?.unref();
  sync.start();

  const port = (s: Server) => (s.address() as { port: number }).port;
  return {
    dnsPort,
    httpPort: port(servers[0]!),
    metricsPort: servers[1] ? port(servers[1]) : undefined,
    zone,
    sync,
    handler,
    metrics,
    config: () => config,
    enterLameduck: () => {
      lameduck = true;
    },
    get inLameduck() {
      return lameduck;
    },
    stop: async () => {
      clearInterval(syncWarn);
      transfer?.stop();
      await Promise.all([udp?.close(), tcpListener.close()]);
      queryLog?.close();
      forwarder.close();
      await sync?.stop();
      await source?.stop();
      events.close();
      await Promise.all(servers.map((s) => new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); })));
      metrics.close();
    },
  };
}

/** The zone, with its pod updates sent to autopath's index (and to the zone only when it serves pod records from them). */
function teePods(zone: ZoneWriter, index: PodIpIndex, podsInZone: boolean): ZoneWriter {
  return {
    setService: (s) => zone.setService(s),
    deleteService: (ns, name) => zone.deleteService(ns, name),
    setSlice: (s) => zone.setSlice(s),
    deleteSlice: (ns, name) => zone.deleteSlice(ns, name),
    setPod: (p) => {
      if (podsInZone) zone.setPod(p);
      index.setPod(p);
    },
    deletePod: (ns, name) => {
      if (podsInZone) zone.deletePod(ns, name);
      index.deletePod(ns, name);
    },
  };
}
