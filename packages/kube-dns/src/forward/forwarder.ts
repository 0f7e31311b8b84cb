// Sends questions we do not own to stub-domain servers or the upstream nameservers.
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { randomInt } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Logger, Nameserver } from '@kube-dns/config';
import { DnsTimeoutError, buildQuery, exchange, type Transport } from '@kube-dns/dns-client';
import { LogLimiter } from './log-limiter.js';
import { LoopProbes, type ProbeTarget } from './loop-detect.js';
import { stubDomainOf } from './upstreams.js';
import { DROP, ReplyBudget } from '../server/reply-budget.js';
import { UpstreamSockets } from './upstream-sockets.js';
import { questionEnd, replyProblem } from './reply-check.js';
import { Flag, capEdnsUdpSize, errorReply, withoutEdnsOptions } from '../server/wire.js';
import { OUR_UDP_SIZE } from '../server/encode.js';

export interface ForwardStats {
  /** server "ip:port" → counts, and whether its last exchange failed */
  perServer: Map<string, { requests: number; failures: number; failing?: boolean; downUntil?: number; lastUsed?: number }>;
}

export interface ForwarderOptions {
  log: Logger;
  timeoutMs?: number;
  /** Resolves a stub server given as a name inside the cluster zone (through our own records). */
  resolveClusterName?: (name: string) => string | undefined;
  clusterZone?: string;
  /**
   * Forwards in flight at most (CoreDNS forward's max_concurrent); beyond it a query gets SERVFAIL
   * at once. Each forward holds a socket and a timer until its upstream answers or times out, so
   * with a slow upstream an unbounded count grows with the query rate times the timeout (a
   * random-subdomain flood). Queries waiting on an identical one in flight are bounded by the
   * same number apart (a flood of one name). Default 1000.
   */
  maxConcurrent?: number;
  /**
   * Of the queries over `maxConcurrent`, this many a second are answered SERVFAIL at once; the
   * rest are dropped (server/reply-budget.ts: answering a flood would cost what the cap saves).
   * Default 1000.
   */
  overflowRepliesPerSecond?: number;
  /** A forward's whole time at least, every server tried (FORWARD_DEADLINE_MS; tests shorten it). */
  deadlineMs?: number;
  /** How long a server that did not answer is tried last (DOWN_RETRY_MS; tests shorten it). */
  downRetryMs?: number;
  /** How long the counts of a server no longer configured are kept unused (SERVER_STATS_IDLE_MS; tests shorten it). */
  serverStatsIdleMs?: number;
  /** Looks up a stub server's host name outside the cluster zone (default: the system resolver; tests slow it). */
  lookupHost?: (name: string) => Promise<string | undefined>;
}

/** One forward's state across the servers it asks (Forwarder.ask). */
interface Attempt {
  /** As the client sent it. */
  readonly query: Buffer;
  /** The copy sent upstream (its ID replaced for each server). */
  readonly out: Buffer;
  /** End of the question. */
  readonly qEnd: number;
  readonly lname: string;
  readonly transport: Transport;
  readonly timeoutMs: number;
  readonly deadline: number;
  /** Servers of this round that timed out: asked again in the next. */
  timedOut: Nameserver[];
  /** The last SERVFAIL or REFUSED, relayed when no server does better. */
  last: Buffer | undefined;
}

/**
 * What makes two forwards the same: the transport, and the query's bytes but its ID with the name
 * as lower-cased (its flags, type, class, EDNS size, DO bit and options included, so that only
 * a resolver's identical questions share a reply). Undefined for a query without a question, or
 * with more than MAX_SHARED_TAIL bytes after it (a resolver's OPT record, a cookie included, is
 * tens of bytes; a key of a 64 KiB TCP query would double what its forward holds).
 */
function sameQueryKey(query: Buffer, lname: string, transport: Transport): string | undefined {
  const qEnd = questionEnd(query);
  if (qEnd < 0 || query.length - qEnd > MAX_SHARED_TAIL) return undefined;
  // the name's octets are the question's from 12 to the type (qEnd - 4); lname stands for them
  return `${transport} ${query.toString('latin1', 2, 12)} ${lname} ${query.toString('latin1', qEnd - 4)}`;
}

const MAX_SHARED_TAIL = 512;

/** The reply as this client's own: a copy (each client's may be cut to its size), its ID and spelling of the question. */
function forClient(reply: Buffer | undefined, query: Buffer): Buffer | undefined {
  if (!reply) return reply;
  const qEnd = questionEnd(query);
  const out = Buffer.from(reply);
  out.writeUInt16BE(query.readUInt16BE(0), 0);
  // the client's own spelling of the question (its 0x20 case), as our own answers keep it
  if (qEnd > 0 && out.length >= qEnd) query.copy(out, 12, 12, qEnd);
  return out;
}

const RCODE_SERVFAIL = 2;
const RCODE_REFUSED = 5;
/** A forward's whole time, every server tried, at least (CoreDNS's forward plugin: 5 s). */
const FORWARD_DEADLINE_MS = 5000;
/** How long a server that did not answer goes to the end of the list (inOrder). */
const DOWN_RETRY_MS = 30_000;
/**
 * The counts (and so the metric series) of a server not configured as such (removed from the
 * ConfigMap, or an address a stub server's name resolved to) go once unused this long: a
 * headless DNS Service named as a stub server would otherwise add a series per pod IP it ever
 * had. Longer than a rate() window, so the last increase still shows.
 */
const SERVER_STATS_IDLE_MS = 10 * 60_000;

const systemLookup = (name: string): Promise<string | undefined> => lookup(name).then((r) => r.address, () => undefined);

const serverKey = (s: Nameserver) => (isIP(s.host) === 6 ? `[${s.host}]:${s.port}` : `${s.host}:${s.port}`);

export class Forwarder {
  private upstreams: Nameserver[] = [];
  private stubDomains: ReadonlyMap<string, Nameserver[]> = new Map();
  /** Stub domains inside a zone of ours, whose names are forwarded rather than answered (the handler asks). */
  readonly zoneStubs = new ZoneStubs();
  private readonly nameCache = new Map<string, { ip: string | undefined; until: number }>();
  /** Lookups of stub server names under way, by name (lookUpStubServer). */
  private readonly lookups = new Map<string, Promise<string | undefined>>();
  readonly stats: ForwardStats = { perServer: new Map() };
  private readonly probes = new LoopProbes();
  /** "ip:port" of upstreams dropped because they sent our own queries back to us. */
  readonly looping = new Set<string>();
  /** "domain ip:port" of stub-domain servers dropped because they sent the domain's queries back to us. */
  readonly loopingStubs = new Set<string>();
  loopsDetected = 0;
  /** Forwards started and not yet finished (each may try several servers in turn). */
  inFlight = 0;
  /** Queries over the cap: `overflow.replied` answered SERVFAIL at once, `overflow.dropped` not answered. */
  readonly overflow: ReplyBudget;
  readonly maxConcurrent: number;
  private readonly overLimitLog = new LogLimiter(10_000);
  /** Forwards in flight by sameQueryKey: an identical query waits for the same reply. */
  private readonly sameInFlight = new Map<string, Promise<Buffer | undefined>>();
  /** Queries waiting on an identical one in flight (at most maxConcurrent). */
  joining = 0;
  private readonly unresolvedClusterLog = new LogLimiter(30_000);

  constructor(private readonly opts: ForwarderOptions) {
    this.maxConcurrent = opts.maxConcurrent ?? 1000;
    this.overflow = new ReplyBudget(opts.overflowRepliesPerSecond ?? 1000);
  }

  /** UDP to upstream and stub servers: a few long-lived sockets per server (upstream-sockets.ts). */
  private readonly sockets = new UpstreamSockets();

  /** Closes the upstream sockets; forwards still waiting fail (shutdown). */
  close(): void {
    this.sockets.close();
  }

  /** Queries refused because `maxConcurrent` forwards were in flight (answered or dropped). */
  get rejected(): number {
    return this.overflow.replied + this.overflow.dropped;
  }

  private loopChecks = false;

  /** Sets the upstreams; once loop checks are on, probes each of them (in the background). */
  setUpstreams(servers: Nameserver[]): void {
    this.looping.clear();
    this.upstreams = servers;
    if (this.loopChecks) void this.probeForLoops(servers);
  }

  /** Turns loop probing on (our DNS listener must be up, or a looping probe finds nobody) and probes now. */
  startLoopChecks(): Promise<void> {
    this.loopChecks = true;
    void this.probeForLoops(this.upstreams);
    return this.probeStubs();
  }

  /**
   * Probes the stub domains' servers again once the cluster's records are in (the initial sync):
   * a server named inside the cluster zone (the kube-dns Service's name, say) has no address before.
   */
  probeStubsAgain(): Promise<void> {
    return this.loopChecks ? this.probeStubs() : Promise.resolve();
  }

  /** Resolves once every probe is answered or timed out (tests). */
  probing: Promise<void> = Promise.resolve();

  private probeForLoops(servers: Nameserver[], domain?: string): Promise<void> {
    const before = this.probing;
    this.probing = Promise.all([
      before,
      ...servers.map(async (s) => {
        const name = this.probes.create({ server: serverKey(s), ...(domain !== undefined && { domain }) });
        if (!name) return;
        try {
          await exchange({ host: s.host, port: s.port }, buildQuery({ name, type: 'HINFO', id: randomInt(0, 65536) }), 'udp', this.opts.timeoutMs ?? 2000);
        } catch {
          /* an unreachable upstream is not a loop */
        } finally {
          // a looping query can arrive after the upstream gave up on it: keep the name a while
          setTimeout(() => this.probes.forget(name), 10_000).unref();
        }
      }),
    ]).then(() => undefined);
    return this.probing;
  }

  /**
   * Probes every stub domain's servers with a name inside the domain. Servers named by host name
   * are looked up first; a cluster name that has no address yet is skipped and not remembered (before
   * the initial sync every cluster name has none, and a forward would then skip it for 30 s).
   */
  private async probeStubs(): Promise<void> {
    const stubs = this.stubDomains;
    const zone = this.opts.clusterZone;
    const inCluster = (s: Nameserver) => s.family === 0 && zone !== undefined && (s.host === zone || s.host.endsWith(`.${zone}`));
    await Promise.all(
      [...stubs].map(async ([domain, list]) => {
        const clusterNamed = list.flatMap((s) => {
          const ip = inCluster(s) ? this.opts.resolveClusterName?.(s.host) : undefined;
          return ip ? [{ ...s, host: ip, family: isIP(ip) as 4 | 6 }] : [];
        });
        const others = await this.resolveStubServers(list.filter((s) => !inCluster(s)), performance.now() + (this.opts.timeoutMs ?? 2000));
        const servers = [...others, ...clusterNamed];
        // the config changed while a name was looked up: the new one is probed on its own
        if (this.stubDomains === stubs) await this.probeForLoops(servers, domain);
      }),
    );
    await this.probing;
  }

  /**
   * Called for every query we are about to forward: a query for one of our probe names means
   * the server it was sent to loops back to us, and so does one of our own forwards still in
   * flight that arrives back at our UDP listener (from `peerPort`, one of our forwarding
   * sockets). That server is dropped and the query fails at once: forwarding it again would only
   * feed the loop, a thousand forwards deep until --max-concurrent-forwards is full.
   */
  private detectLoop(query: Buffer, lname: string, transport: Transport, peerPort: number | undefined): boolean {
    const probe = this.probes.size === 0 ? undefined : this.probes.match(lname);
    if (probe) return this.loopFound(probe), true;
    const server = transport === 'udp' && peerPort !== undefined ? this.sockets.sentFrom(peerPort, query) : undefined;
    if (!server) return false;
    const domain = stubDomainOf(lname, this.stubDomains);
    this.loopFound({ server, ...(domain !== undefined && { domain }) });
    return true;
  }

  private loopFound({ server, domain }: ProbeTarget): void {
    if (domain === undefined) {
      if (this.looping.has(server)) return;
      this.looping.add(server);
      this.loopsDetected++;
      this.upstreams = this.upstreams.filter((s) => serverKey(s) !== server);
      this.opts.log.error(
        { server, remaining: this.upstreams.map(serverKey) },
        `forwarding loop detected: upstream ${server} sends our queries back to us; no longer forwarding to it (fix the node's resolv.conf or the upstreamNameservers key)`,
      );
      return;
    }
    const key = `${domain} ${server}`;
    if (this.loopingStubs.has(key)) return;
    this.loopingStubs.add(key);
    this.loopsDetected++;
    this.opts.log.error(
      { domain, server },
      `forwarding loop detected: server ${server} of stub domain ${domain} sends the domain's queries back to us; no longer forwarding ${domain} to it (fix the stubDomains key of the ConfigMap: a stub server must not be the cluster DNS itself)`,
    );
  }

  /**
   * Sets the stub domains; once loop checks are on, probes their servers (in the background).
   * `inZone`: those of them inside a zone we answer, whose names the handler forwards first.
   */
  setStubDomains(stubs: ReadonlyMap<string, Nameserver[]>, inZone: readonly string[] = []): void {
    this.stubDomains = stubs;
    this.zoneStubs.set(inZone);
    this.nameCache.clear();
    this.loopingStubs.clear();
    if (this.loopChecks) void this.probeStubs();
  }

  get servers(): readonly Nameserver[] {
    return this.upstreams;
  }

  /**
   * The per-server counts, less those of servers not configured by address (an upstream, or a
   * stub server written as an IP) that were unused for SERVER_STATS_IDLE_MS: what /metrics reads.
   */
  serverStats(): ForwardStats['perServer'] {
    const idleSince = performance.now() - (this.opts.serverStatsIdleMs ?? SERVER_STATS_IDLE_MS);
    const configured = new Set(this.upstreams.map(serverKey));
    for (const list of this.stubDomains.values()) for (const s of list) if (s.family !== 0) configured.add(serverKey(s));
    for (const [key, st] of this.stats.perServer) if (!configured.has(key) && (st.lastUsed ?? 0) <= idleSince) this.stats.perServer.delete(key);
    return this.stats.perServer;
  }

  /**
   * Sends `query` (as received) to the servers for `lname` in turn (inOrder), within
   * FORWARD_DEADLINE_MS in all, going round again to those that timed out while time is left:
   * the next one on a timeout, a transport error, SERVFAIL, REFUSED,
   * or a reply that is not a well-formed answer to this question (forward/reply-check.ts).
   * Resolves with the reply (the last SERVFAIL or REFUSED when no server did better; the
   * client's ID and spelling of the question restored), undefined
   * when every server failed or the cap is reached (the caller answers SERVFAIL), or DROP when
   * the cap is reached and the overflow's reply budget is spent (the caller sends nothing).
   */
  async forward(query: Buffer, lname: string, transport: Transport, peerPort?: number): Promise<Buffer | undefined | typeof DROP> {
    if (this.detectLoop(query, lname, transport, peerPort)) return undefined;
    // the same question already on its way upstream: wait for its reply rather than send another
    // (RFC 5452 5; dnsmasq's CVE-2020-25686): each copy in flight is one more port and ID an
    // off-path spoofer can hit, and a flood of one name would fill the cap with copies
    const key = sameQueryKey(query, lname, transport);
    const same = key === undefined ? undefined : this.sameInFlight.get(key);
    // the waiting are bounded too: each holds its query and state for up to the whole deadline,
    // and a flood of one name at 70,000 qps held 120 MB of heap in 5 s. Past the bound such a
    // query goes the way of any other: a forward of its own under the cap, or the overflow
    if (same && this.joining < this.maxConcurrent) {
      this.joining++;
      try {
        return forClient(await same, query);
      } finally {
        this.joining--;
      }
    }
    if (this.inFlight >= this.maxConcurrent) {
      const answered = this.overflow.take(performance.now());
      this.overLimitLog.maybe((suppressed) =>
        this.opts.log.warn(
          { inFlight: this.inFlight, max: this.maxConcurrent, name: lname, rejectedTotal: this.rejected, suppressed },
          `${this.maxConcurrent} forwards in flight (--max-concurrent-forwards): answering SERVFAIL at once (at most --overflow-servfails-per-second, the rest dropped); upstreams are slow or a flood of names outside the cluster is under way`,
        ),
      );
      return answered ? undefined : DROP;
    }
    this.inFlight++;
    const sent = this.forwardNow(query, lname, transport);
    // the first of identical queries is the one the others wait on (one past the bound of the
    // waiting forwards on its own and leaves the entry to the first)
    const shared = key !== undefined && !this.sameInFlight.has(key);
    if (shared) this.sameInFlight.set(key, sent);
    try {
      return forClient(await sent, query);
    } finally {
      this.inFlight--;
      if (shared) this.sameInFlight.delete(key);
    }
  }

  private async forwardNow(query: Buffer, lname: string, transport: Transport): Promise<Buffer | undefined> {
    const timeoutMs = this.opts.timeoutMs ?? 2000;
    // the whole forward, every server tried included, within a client's patience (glibc waits 5 s a try)
    const deadline = performance.now() + Math.max(timeoutMs, this.opts.deadlineMs ?? FORWARD_DEADLINE_MS);
    const domain = stubDomainOf(lname, this.stubDomains);
    const servers = this.inOrder(domain === undefined ? this.upstreams : this.withoutLooping(domain, await this.resolveStubServers(this.stubDomains.get(domain)!, deadline)));
    const qEnd = questionEnd(query);
    if (qEnd < 0) return undefined;
    const out = withoutEdnsOptions(query, qEnd); // a copy: the client's EDNS options stay with us (hop by hop)
    if (transport === 'udp') capEdnsUdpSize(out, qEnd, OUR_UDP_SIZE); // we relay no more over UDP anyway
    const attempt: Attempt = { query, out, qEnd, lname, transport, timeoutMs, deadline, timedOut: [], last: undefined };
    // round after round while time is left, as CoreDNS's forward does: a lost datagram to the
    // only upstream (a node resolv.conf with one nameserver) is asked again, not a SERVFAIL.
    // Only servers that timed out go round again: an error comes at once (a refused port would
    // spin until the deadline), and a SERVFAIL or REFUSED is that server's answer.
    for (let round: readonly Nameserver[] = servers; round.length > 0; ) {
      attempt.timedOut = [];
      for (const s of round) {
        if (deadline - performance.now() < 1) return attempt.last;
        const reply = await this.ask(s, attempt);
        if (reply) return reply;
      }
      round = attempt.timedOut;
    }
    return attempt.last;
  }

  /**
   * One server asked once: the reply to relay (the client's ID and spelling of the question
   * restored), or undefined to go on, with a SERVFAIL or REFUSED kept in `a.last` and a server
   * that timed out in `a.timedOut`.
   */
  private async ask(s: Nameserver, a: Attempt): Promise<Buffer | undefined> {
    const { query, out, qEnd, lname, transport } = a;
    const key = serverKey(s);
    const st = this.stats.perServer.get(key) ?? { requests: 0, failures: 0 };
    this.stats.perServer.set(key, st);
    st.requests++;
    st.lastUsed = performance.now();
    // a fresh random ID towards the upstream: the client's ID is predictable to an off-path spoofer
    out.writeUInt16BE(randomInt(0, 65536), 0);
    const timeout = Math.min(a.timeoutMs, Math.floor(a.deadline - performance.now()));
    let reply: Buffer;
    try {
      const server = { host: s.host, port: s.port };
      reply = transport === 'udp' ? await this.sockets.exchange(server, out, timeout) : await exchange(server, out, transport, timeout);
    } catch (e) {
      st.downUntil = performance.now() + (this.opts.downRetryMs ?? DOWN_RETRY_MS);
      this.failed(key, st, (e as Error).message, lname);
      if (e instanceof DnsTimeoutError) a.timedOut.push(s);
      return undefined;
    }
    const clientId = query.readUInt16BE(0);
    const problem = replyProblem(reply, query.subarray(12, qEnd));
    // a TC reply cut with its counts left as they were: the question with TC, the client retries over TCP
    if (problem === 'truncated') return errorReply(query, clientId, reply[3]! & 0xf, qEnd, Flag.TC | Flag.RA | (reply.readUInt16BE(2) & Flag.AA));
    if (problem) {
      st.downUntil = performance.now() + (this.opts.downRetryMs ?? DOWN_RETRY_MS);
      this.failed(key, st, problem, lname);
      return undefined;
    }
    st.downUntil = undefined;
    reply.writeUInt16BE(clientId, 0);
    // the client's own spelling of the question (its 0x20 case), as our own answers keep it
    query.copy(reply, 12, 12, qEnd);
    // the next server may answer: a REFUSED is one server's policy (an ACL, recursion off), not
    // the name's fate, and glibc's resolver and dnsmasq move on from it too
    const rcode = reply.readUInt16BE(2) & 0xf;
    if (rcode === RCODE_SERVFAIL || rcode === RCODE_REFUSED) {
      this.failed(key, st, rcode === RCODE_SERVFAIL ? 'answered SERVFAIL' : 'answered REFUSED', lname);
      a.last = reply;
      return undefined;
    }
    if (st.failing) {
      st.failing = false;
      this.opts.log.info({ server: key }, 'upstream nameserver answers again');
    }
    return reply;
  }

  /** A stub domain's servers less those found to loop (loopFound). */
  private withoutLooping(domain: string, servers: Nameserver[]): Nameserver[] {
    return this.loopingStubs.size === 0 ? servers : servers.filter((s) => !this.loopingStubs.has(`${domain} ${serverKey(s)}`));
  }

  /**
   * The servers in their configured order, those that did not answer (a timeout, an error, a
   * malformed reply) in the last DOWN_RETRY_MS moved to the end: a dead first upstream would
   * otherwise cost every query its full timeout. dnsmasq likewise prefers the server that
   * answers; once the time is up the server is tried in its place again.
   */
  private inOrder(servers: readonly Nameserver[]): readonly Nameserver[] {
    const now = performance.now();
    const isDown = (s: Nameserver): boolean => {
      const until = this.stats.perServer.get(serverKey(s))?.downUntil;
      return until !== undefined && until > now;
    };
    // every forward asks: the usual answer (none down) allocates nothing
    if (!servers.some(isDown)) return servers;
    return [...servers.filter((s) => !isDown(s)), ...servers.filter(isDown)];
  }

  /**
   * Counts a failure; says so once when a server starts failing (naming it and why), then only
   * at debug level until it answers again, so an outage is visible without flooding the log.
   */
  private failed(key: string, st: { failures: number; failing?: boolean }, why: string, lname: string): void {
    st.failures++;
    if (!st.failing) {
      st.failing = true;
      this.opts.log.warn({ server: key, err: why, qname: lname }, `upstream nameserver ${key} failed (${why}); trying the next, clients get SERVFAIL if all fail`);
    } else this.opts.log.debug({ server: key, err: why, qname: lname }, 'upstream failed, trying the next');
  }

  /** Stub servers written as names: cluster names through our records, others through the system resolver. */
  private async resolveStubServers(list: Nameserver[], deadline: number): Promise<Nameserver[]> {
    const out: Nameserver[] = [];
    for (const s of list) {
      if (s.family !== 0) {
        out.push(s);
        continue;
      }
      const cached = this.nameCache.get(s.host);
      const ip = cached && cached.until > Date.now() ? cached.ip : await this.lookUpStubServer(s, deadline);
      if (ip) out.push({ ...s, host: ip, family: isIP(ip) as 4 | 6 });
    }
    return out;
  }

  /**
   * A stub server's name looked up; outside the cluster zone the address (or none) kept 30 s, one
   * lookup per name at a time, shared by every forward that needs it, and none waits for it past
   * its deadline: while the node's nameservers do not answer, each lookup takes the resolver's
   * timeout in one of libuv's four threads, and with a lookup per forward twenty queries at once
   * waited in line up to 15 s and more, long after their clients had given up.
   */
  private async lookUpStubServer(s: Nameserver, deadline: number): Promise<string | undefined> {
    const zone = this.opts.clusterZone;
    if (zone && (s.host === zone || s.host.endsWith(`.${zone}`))) {
      // our own records, asked every time (a resolve(), in memory): a miss kept 30 s would hold past the
      // initial sync, or past the Service's creation, that gives the name its address
      const ip = this.opts.resolveClusterName?.(s.host);
      if (!ip) this.unresolvedClusterLog.maybe((suppressed) => this.opts.log.warn({ server: s.raw, suppressed }, 'the stub domain server name has no address in the cluster (yet); skipping it'));
      return ip;
    }
    let looking = this.lookups.get(s.host);
    if (!looking) {
      looking = (this.opts.lookupHost ?? systemLookup)(s.host)
        .catch(() => undefined)
        .then((ip) => {
          this.lookups.delete(s.host);
          return this.remember(s, ip);
        });
      this.lookups.set(s.host, looking);
    }
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - performance.now()), undefined)));
    return Promise.race([looking, expired]).finally(() => clearTimeout(timer));
  }

  private remember(s: Nameserver, ip: string | undefined): string | undefined {
    this.nameCache.set(s.host, { ip, until: Date.now() + 30_000 });
    if (!ip) this.opts.log.warn({ server: s.raw }, 'cannot resolve the stub domain server name; skipping it');
    return ip;
  }
}

/** Stub domains inside a zone of ours: `any` is a field, read on every query before the name's string is built. */
export class ZoneStubs {
  any = false;
  private domains: readonly string[] = [];

  set(domains: readonly string[]): void {
    this.domains = domains;
    this.any = domains.length > 0;
  }

  get list(): readonly string[] {
    return this.domains;
  }

  /** `lname` is in one of them: forwarded, not answered from the records. */
  covers(lname: string): boolean {
    for (const d of this.domains) if (lname === d || lname.endsWith(`.${d}`)) return true;
    return false;
  }
}
