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

/** `zoneName` as asked (case kept); `qtype` as asked (an IXFR gets the whole zone, as RFC 1995 allows). */
export function encodeTransfer(id: number, zoneName: string, records: Answer[], qtype: 'AXFR' | 'IXFR' = 'AXFR'): Buffer {
  const parts: Buffer[] = [];
  let batch: Answer[] = [];
  let size = 0;
  const flush = (): void => {
    const msg = dnsPacket.encode({
      type: 'response',
      id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER,
      questions: [{ name: zoneName, type: qtype, class: 'IN' }],
      answers: batch,
    });
    const len = Buffer.alloc(2);
    len.writeUInt16BE(msg.length, 0);
    parts.push(len, msg);
    batch = [];
    size = 0;
  };
  for (const r of records) {
    const n = dnsPacket.encodingLength({ answers: [r] }) - 12; // the record alone, without the header
    if (batch.length > 0 && size + n > MESSAGE_BUDGET) flush();
    batch.push(r);
    size += n;
  }
  if (batch.length > 0) flush();
  const out = Buffer.concat(parts);
  framed.add(out);
  return out;
}

/** A copy of a framed transfer with every message's ID set to `id` (the original may still be being written). */
export function withTransferId(transfer: Buffer, id: number): Buffer {
  const out = Buffer.from(transfer);
  for (let off = 0; off + 4 <= out.length; off += 2 + out.readUInt16BE(off)) out.writeUInt16BE(id, off + 2);
  framed.add(out);
  return out;
}
