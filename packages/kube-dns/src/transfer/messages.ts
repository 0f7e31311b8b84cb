// AXFR answers on the wire (RFC 5936): the records split over as many messages as needed, each
// carrying the question and the transfer's ID, framed with their TCP length prefixes so the TCP
// listener writes them out as they are.
import { Buffer } from 'node:buffer';
import * as dnsPacket from 'dns-packet';
import type { Answer } from 'dns-packet';

/** Bytes of records per message, well below the 64 KiB limit (BIND uses ~16 KiB as well). */
const MESSAGE_BUDGET = 16_000;

/** Buffers made here hold several framed messages: the TCP listener must not frame them again. */
const framed = new WeakSet<Buffer>();

export function isFramed(b: Buffer): boolean {
  return framed.has(b);
}

/** Replies to come that are zone transfers being built: the TCP listener reads nothing more meanwhile. */
const underway = new WeakSet<Promise<unknown>>();

export function transferUnderway<T>(p: Promise<T>): Promise<T> {
  underway.add(p);
  return p;
}

export function isTransferUnderway(p: Promise<unknown>): boolean {
  return underway.has(p);
}

/**
 * Encodes a transfer a few records at a time (add), so that its building can pause between
 * slices (transfer.ts); finish() gives the framed messages. `zoneName` as asked (case kept);
 * `qtype` as asked (an IXFR gets the whole zone, as RFC 1995 allows).
 */
export class TransferEncoder {
  private readonly parts: Buffer[] = [];
  private batch: Answer[] = [];
  private size = 0;
  records = 0;

  constructor(
    private readonly id: number,
    private readonly zoneName: string,
    private readonly qtype: 'AXFR' | 'IXFR' = 'AXFR',
  ) {}

  /** records[from, to): a few at a time, since encoding costs 4-15 µs a record. */
  add(records: readonly Answer[], from = 0, to = records.length): void {
    for (let i = from; i < to; i++) {
      const r = records[i]!;
      const n = dnsPacket.encodingLength({ answers: [r] }) - 12; // the record alone, without the header
      if (this.batch.length > 0 && this.size + n > MESSAGE_BUDGET) this.flush();
      this.batch.push(r);
      this.size += n;
    }
    this.records += to - from;
  }

  private flush(): void {
    const msg = dnsPacket.encode({
      type: 'response',
      id: this.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER,
      questions: [{ name: this.zoneName, type: this.qtype, class: 'IN' }],
      answers: this.batch,
    });
    const len = Buffer.alloc(2);
    len.writeUInt16BE(msg.length, 0);
    this.parts.push(len, msg);
    this.batch = [];
    this.size = 0;
  }

  finish(): Buffer {
    if (this.batch.length > 0) this.flush();
    const out = Buffer.concat(this.parts);
    this.parts.length = 0;
    framed.add(out);
    return out;
  }
}

/** A whole transfer at once (the SOA alone of an IXFR at our serial; tests). */
export function encodeTransfer(id: number, zoneName: string, records: Answer[], qtype: 'AXFR' | 'IXFR' = 'AXFR'): Buffer {
  const enc = new TransferEncoder(id, zoneName, qtype);
  enc.add(records);
  return enc.finish();
}

/**
 * A copy of a framed transfer for one asker (the original may still be being written): every
 * message's ID set to `id`, and its question's name to `qname`, the asker's spelling of the zone
 * (the wire form from its query; the transfer is kept per zone, whatever case it was asked in).
 */
export function withTransferId(transfer: Buffer, id: number, qname?: Buffer): Buffer {
  const out = Buffer.from(transfer);
  for (let off = 0; off + 4 <= out.length; off += 2 + out.readUInt16BE(off)) {
    out.writeUInt16BE(id, off + 2);
    // the question's name starts right after the 12-octet header; a case-only difference keeps its length
    if (qname && off + 14 + qname.length <= out.length) qname.copy(out, off + 14);
  }
  framed.add(out);
  return out;
}
