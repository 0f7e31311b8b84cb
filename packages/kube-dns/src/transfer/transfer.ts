// Zone transfer (--transfer-to): AXFR of the cluster zone and the external zones over TCP to the
// listed addresses, REFUSED (and counted) for anything else; NOTIFY to the listed IPs when the
// serial moved (checked once a second, so a burst of updates is one NOTIFY).
//
// A transfer is built once per zone and serial and kept: every secondary that comes for that
// serial gets the same bytes (its ID set), and the build (1-2 s of CPU for a zone of 20,000
// Services) is not repeated per secondary. It is built in slices of at most SLICE_MS, Service by
// Service, with the event loop answering queries between them: done at once, it stopped every
// answer for as long. The serial then moves at most once per ten builds' CPU time (serial.ts),
// so transfers take at most a tenth of the CPU under churn; secondaries lag as much, and a change
// waits at most that long for its serial. A change made while a build runs may already be in it
// (it carries the serial of its start; records.ts says which): the next serial brings it anyway.
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import * as dnsPacket from 'dns-packet';
import client, { type Registry } from 'prom-client';
import type { Logger } from '@kube-dns/config';
import type { Transport } from '@kube-dns/dns-client';
import type { Zone } from '../records/zone.js';
import { soa } from '../resolve/answers.js';
import type { ResolveOptions } from '../resolve/types.js';
import { encodeRcode } from '../server/encode.js';
import { RCODE, type ParsedQuery } from '../server/wire.js';
import { LogLimiter } from '../forward/log-limiter.js';
import type { ExternalZone } from '../zones/external.js';
import { allowed, type TransferAcl } from './acl.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { encodeTransfer, TransferEncoder, withTransferId } from './messages.js';
import { Notifier } from './notify.js';
import { clusterZoneRecordsByService, externalZoneRecordsByService } from './records.js';

export const TYPE_IXFR = 251;
export const TYPE_AXFR = 252;

export type RefusedReason = 'udp' | 'address' | 'zone' | 'off';

export interface ZoneTransferOptions {
  zone: Zone;
  cluster: ResolveOptions;
  external: readonly ExternalZone[];
  log: Logger;
  registry: Registry;
  /** How often to look for changes to notify about (default 1 s). */
  checkEveryMs?: number;
  /** The serial's pace, raised when builds are expensive. */
  serialClock?: { minIntervalMs: number };
  /**
   * Whether the first sync with the API server is done. No NOTIFY before: the secondary's SOA
   * query would get SERVFAIL, and it would not ask again before the SOA's RETRY (two hours).
   */
  isSynced?: () => boolean;
  /** The address we serve on (--dns-bind-address): NOTIFYs leave from it unless a wildcard. */
  notifySource?: string;
}

/** The serial moves at most once per this many builds' time, and at least a second apart, at most a minute. */
const BUILDS_PER_SERIAL = 10;
const MAX_SERIAL_INTERVAL_MS = 60_000;
/** A build runs this long at most before the event loop answers what came in meanwhile. */
const SLICE_MS = 2;
/** Records encoded between two looks at the clock. */
const ENCODE_BATCH = 64;

interface Built {
  serial: number;
  framed: Buffer;
  records: number;
  /** CPU time of the build, the slices summed (not the wait between them). */
  ms: number;
}

export class ZoneTransfer {
  private readonly notifier: Notifier;
  private transfers!: client.Counter<'zone'>;
  private refused!: client.Counter<'reason'>;
  private timer: NodeJS.Timeout | undefined;
  private notifiedSerial: number;
  /** The last transfer built per question (zone, AXFR/IXFR), for its serial. */
  private readonly built = new Map<string, Built>();
  /** The build under way per question (one at a time: a newer serial's waits for it). */
  private readonly building = new Map<string, { serial: number; done: Promise<Built> }>();
  private stopped = false;
  private acl: TransferAcl | undefined;
  private metricsReady = false;
  /**
   * Refusals are logged at most once per 10 s (with how many were not): an AXFR over UDP costs
   * its sender nothing and may carry any source address, and an external zone faces the internet
   * and its scanners. The metric counts every one.
   */
  private readonly refusedLog = new LogLimiter(10_000);

  constructor(private readonly o: ZoneTransferOptions) {
    this.notifier = new Notifier(o.log, o.notifySource);
    this.notifiedSerial = o.cluster.serial;
  }

  /**
   * Who may transfer and who gets NOTIFY (--transfer-to, or the ConfigMap key transferTo, live);
   * undefined turns transfers off (every request REFUSED).
   */
  setAcl(acl: TransferAcl | undefined): void {
    this.acl = acl;
    if (acl) this.registerMetrics();
    clearInterval(this.timer);
    this.timer = undefined;
    // With or without NOTIFY targets: the serial moves only when read, and an SOA answer from the
    // response cache does not read it. Without this, a change made within a second of the last
    // move left the old serial cached for as long as nothing else asked the resolver, and a
    // secondary polling the SOA (a range in --transfer-to gets no NOTIFY) saw no change.
    if (acl) {
      this.timer = setInterval(() => this.check(), this.o.checkEveryMs ?? 1000);
      this.timer.unref();
    }
  }

  /** The metrics exist from the first time transfers are on (a cluster without them sees none). */
  private registerMetrics(): void {
    if (this.metricsReady) return;
    this.metricsReady = true;
    const o = this.o;
    this.transfers = new client.Counter({
      name: 'kubedns_zone_transfers_total',
      help: 'Zone transfers (AXFR) served, by zone.',
      labelNames: ['zone'],
      registers: [o.registry],
    });
    this.refused = new client.Counter({
      name: 'kubedns_zone_transfers_refused_total',
      help: 'Zone transfer requests refused: over UDP, from an address not in --transfer-to, or for a zone that is not ours.',
      labelNames: ['reason'],
      registers: [o.registry],
    });
    const n = this.notifier;
    new client.Gauge({
      name: 'kubedns_zone_notify',
      help: 'NOTIFY messages to the secondaries of --transfer-to: sent (tries included), acknowledged, failed (no answer after every try).',
      labelNames: ['state'],
      registers: [o.registry],
      collect() {
        this.set({ state: 'sent' }, n.stats.sent);
        this.set({ state: 'acknowledged' }, n.stats.acknowledged);
        this.set({ state: 'failed' }, n.stats.failed);
      },
    });
  }

  /**
   * The reply to an AXFR/IXFR question: the whole zone as framed TCP messages (a promise while
   * it is being built), or REFUSED. An
   * IXFR from a secondary already at our serial gets our SOA alone (RFC 1995 4), over UDP too
   * (RFC 1995 2: UDP is allowed, and a reply that would not fit is the SOA alone).
   */
  answer(query: Buffer, q: ParsedQuery, transport: Transport, address: string | undefined): Buffer | Promise<Buffer> {
    const refuse = (reason: RefusedReason): Buffer => {
      if (this.metricsReady) this.refused.inc({ reason });
      this.refusedLog.maybe((suppressed) =>
        this.o.log.info({ client: address, zone: q.lname, transport, reason, ...(suppressed > 0 && { suppressedSinceLast: suppressed }) }, 'zone transfer refused'),
      );
      return encodeRcode(query, q, RCODE.REFUSED);
    };
    if (!this.acl) return refuse('off');
    const ixfr = q.qtype === TYPE_IXFR;
    if (transport !== 'tcp' && !ixfr) return refuse('udp');
    if (!allowed(this.acl, address)) return refuse('address');
    const name = q.lname;
    const ez = name === this.o.cluster.zone ? undefined : this.o.external.find((z) => z.name === name);
    if (name !== this.o.cluster.zone && !ez) return refuse('zone');
    const serial = this.o.cluster.serial; // first: a serial due moves before the build reads it
    if (ixfr && (transport !== 'tcp' || serialAtLeast(clientSerial(query), serial))) {
      const record = soa(q.name, ez ? ez.opts : this.o.cluster);
      if (transport === 'tcp') return encodeTransfer(q.id, q.name, [record], 'IXFR'); // framed, one message
      return Buffer.from(dnsPacket.encode({ type: 'response', id: q.id, flags: dnsPacket.AUTHORITATIVE_ANSWER, questions: [{ name: q.name, type: 'IXFR', class: 'IN' }], answers: [record] }));
    }
    // one kept per zone and type, whatever the case asked in: an allowed client could otherwise
    // keep a zone's worth of memory per spelling
    const key = `${name}/${q.qtype}`;
    const served = (t: Built): Buffer => {
      // who may transfer can change while a build runs (transferTo in the ConfigMap)
      if (!this.acl) return refuse('off');
      if (!allowed(this.acl, address)) return refuse('address');
      this.transfers.inc({ zone: name });
      this.o.log.info({ client: address, zone: name, records: t.records, serial: t.serial }, 'zone transfer');
      return withTransferId(t.framed, q.id, query.subarray(q.nameOffset, q.nameOffset + q.nameLength));
    };
    const t = this.built.get(key);
    if (t && t.serial === serial) return served(t);
    return this.whenBuilt(key, serial, q, ez).then(served, (e: unknown) => {
      if (!this.stopped) this.o.log.error({ err: e, zone: name }, 'zone transfer failed');
      return encodeRcode(query, q, RCODE.SERVFAIL);
    });
  }

  /** The transfer for `serial`: the build under way for it, or a new one once the one under way is done. */
  private whenBuilt(key: string, serial: number, q: ParsedQuery, ez: ExternalZone | undefined): Promise<Built> {
    const under = this.building.get(key);
    if (under?.serial === serial) return under.done;
    if (under) {
      // an older serial's build: the newest serial's starts after it (one build per question at a time)
      return under.done.then(
        () => this.latest(key, q, ez),
        () => this.latest(key, q, ez),
      );
    }
    const done = this.build(key, serial, q, ez).finally(() => {
      if (this.building.get(key)?.done === done) this.building.delete(key);
    });
    this.building.set(key, { serial, done });
    return done;
  }

  private latest(key: string, q: ParsedQuery, ez: ExternalZone | undefined): Promise<Built> {
    const serial = this.o.cluster.serial;
    const t = this.built.get(key);
    return t && t.serial === serial ? Promise.resolve(t) : this.whenBuilt(key, serial, q, ez);
  }

  private async build(key: string, serial: number, q: ParsedQuery, ez: ExternalZone | undefined): Promise<Built> {
    const began = performance.now();
    const services = ez ? externalZoneRecordsByService(this.o.zone, ez) : clusterZoneRecordsByService(this.o.zone, this.o.cluster);
    const enc = new TransferEncoder(q.id, q.name, q.qtype === TYPE_IXFR ? 'IXFR' : 'AXFR');
    // the SOA first, read in the asking query's turn: the serial it carries (at both ends) labels the build
    const head = services.next();
    if (!head.done) {
      enc.add(head.value);
      serial = ((head.value[0] as { data?: { serial?: number } } | undefined)?.data?.serial) ?? serial;
    }
    // then a slice at a time: a Service's records (a large headless one's in pieces), encoded a
    // few at a time, until SLICE_MS is spent; then the queries that came meanwhile are answered
    let ms = 0;
    let start = began;
    for (const piece of services) {
      let i = 0;
      do {
        const to = Math.min(piece.length, i + ENCODE_BATCH);
        enc.add(piece, i, to);
        i = to;
        const now = performance.now();
        if (now - start < SLICE_MS) continue;
        ms += now - start;
        await nextTurn();
        if (this.stopped) throw new Error('stopped');
        start = performance.now();
      } while (i < piece.length);
    }
    ms += performance.now() - start;
    const t: Built = { serial, framed: enc.finish(), records: enc.records, ms };
    this.built.set(key, t);
    // paced by the dearest zone's build (a small external zone's must not undo the cluster's)
    let dearest = 0;
    for (const b of this.built.values()) dearest = Math.max(dearest, b.ms);
    if (this.o.serialClock) this.o.serialClock.minIntervalMs = Math.min(MAX_SERIAL_INTERVAL_MS, Math.max(1000, BUILDS_PER_SERIAL * dearest));
    this.o.log.info({ zone: q.lname, records: t.records, bytes: t.framed.length, serial, cpuMs: Math.round(ms), ms: Math.round(performance.now() - began) }, 'zone transfer built');
    return t;
  }

  /** Every second: reads the serial (which moves it when a change is due) and NOTIFYs the secondaries when it moved. */
  private check(): void {
    if (this.o.isSynced && !this.o.isSynced()) return;
    const s = this.o.cluster.serial; // reading it moves it when a change is due
    if (s === this.notifiedSerial) return;
    this.notifiedSerial = s;
    const zones = [{ name: this.o.cluster.zone, opts: this.o.cluster }, ...this.o.external];
    for (const z of zones) {
      const record = soa(z.name, z.opts);
      for (const to of this.acl?.notify ?? []) this.notifier.notify(to, z.name, record);
    }
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.notifier.stop();
  }
}

/** The serial of the SOA an IXFR question carries in its authority section (undefined: none). */
function clientSerial(query: Buffer): number | undefined {
  try {
    const soaRecord = dnsPacket.decode(query).authorities?.find((a) => a.type === 'SOA');
    return (soaRecord?.data as { serial?: number } | undefined)?.serial;
  } catch {
    return undefined;
  }
}

/** a >= b in serial number arithmetic (RFC 1982). */
function serialAtLeast(a: number | undefined, b: number): boolean {
  return a !== undefined && (a === b || ((a - b) >>> 0) < 0x80000000);
}
