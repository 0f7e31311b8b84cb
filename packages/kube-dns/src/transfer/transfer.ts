// Zone transfer (--transfer-to): AXFR of the cluster zone and the external zones over TCP to the
// listed addresses, REFUSED (and counted) for anything else; NOTIFY to the listed IPs when the
// zones changed (checked once a second, so a burst of updates is one NOTIFY).
import { Buffer } from 'node:buffer';
import client, { type Registry } from 'prom-client';
import type { Logger } from '@kube-dns/config';
import type { Transport } from '@kube-dns/dns-client';
import type { Zone } from '../records/zone.js';
import { soa } from '../resolve/answers.js';
import type { ResolveOptions } from '../resolve/types.js';
import { encodeRcode } from '../server/encode.js';
import { RCODE, type ParsedQuery } from '../server/wire.js';
import type { ExternalZone } from '../zones/external.js';
import { allowed, type TransferAcl } from './acl.js';
import { encodeTransfer } from './messages.js';
import { Notifier } from './notify.js';
import { clusterZoneRecords, externalZoneRecords } from './records.js';

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
}

export class ZoneTransfer {
  private readonly notifier: Notifier;
  private transfers!: client.Counter<'zone'>;
  private refused!: client.Counter<'reason'>;
  private timer: NodeJS.Timeout | undefined;
  private notifiedGen: number;
  private acl: TransferAcl | undefined;
  private metricsReady = false;

  constructor(private readonly o: ZoneTransferOptions) {
    this.notifier = new Notifier(o.log);
    this.notifiedGen = o.zone.generation;
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
    if (acl && acl.notify.length > 0) {
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

  /** The reply to an AXFR/IXFR question: the whole zone as framed TCP messages, or REFUSED. */
  answer(query: Buffer, q: ParsedQuery, transport: Transport, address: string | undefined): Buffer {
    const refuse = (reason: RefusedReason): Buffer => {
      if (this.metricsReady) this.refused.inc({ reason });
      this.o.log.info({ client: address, zone: q.lname, transport, reason }, 'zone transfer refused');
      return encodeRcode(query, q, RCODE.REFUSED);
    };
    if (!this.acl) return refuse('off');
    if (transport !== 'tcp') return refuse('udp');
    if (!allowed(this.acl, address)) return refuse('address');
    const name = q.lname;
    let records;
    if (name === this.o.cluster.zone) records = clusterZoneRecords(this.o.zone, this.o.cluster);
    else {
      const ez = this.o.external.find((z) => z.name === name);
      if (!ez) return refuse('zone');
      records = externalZoneRecords(this.o.zone, ez);
    }
    this.transfers.inc({ zone: name });
    this.o.log.info({ client: address, zone: name, records: records.length, serial: this.o.cluster.serial }, 'zone transfer');
    return encodeTransfer(q.id, q.name, records, q.qtype === TYPE_IXFR ? 'IXFR' : 'AXFR');
  }

  private check(): void {
    const g = this.o.zone.generation;
    if (g === this.notifiedGen) return;
    this.notifiedGen = g;
    const zones = [{ name: this.o.cluster.zone, opts: this.o.cluster }, ...this.o.external];
    for (const z of zones) {
      const record = soa(z.name, z.opts);
      for (const to of this.acl?.notify ?? []) this.notifier.notify(to, z.name, record);
    }
  }

  stop(): void {
    clearInterval(this.timer);
    this.notifier.stop();
  }
}
