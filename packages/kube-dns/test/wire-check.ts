// Byte-level checks of a reply against its query, independent of dns-packet (which decodes names
// as UTF-8 and so cannot tell whether the bytes were echoed exactly).

/** A name at `off`, pointers followed: its wire labels (raw bytes) and the offset after it. */
export function readName(buf: Buffer, off: number): { labels: Buffer[]; end: number; wireLength: number } {
  const labels: Buffer[] = [];
  let end = -1;
  let p = off;
  let wireLength = 1;
  for (let hops = 0; hops < 64; hops++) {
    if (p >= buf.length) throw new Error(`name at ${off} runs past the end`);
    const len = buf[p]!;
    if (len === 0) {
      if (end < 0) end = p + 1;
      if (wireLength > 255) throw new Error(`name at ${off} is ${wireLength} octets (max 255)`);
      return { labels, end, wireLength };
    }
    if ((len & 0xc0) === 0xc0) {
      if (p + 1 >= buf.length) throw new Error(`pointer at ${p} runs past the end`);
      if (end < 0) end = p + 2;
      const target = ((len & 0x3f) << 8) | buf[p + 1]!;
      if (target >= p) throw new Error(`pointer at ${p} points forward to ${target}`);
      p = target;
      continue;
    }
    if (len > 63) throw new Error(`label of ${len} octets at ${p} (max 63)`);
    if (p + 1 + len > buf.length) throw new Error(`label at ${p} runs past the end`);
    labels.push(buf.subarray(p + 1, p + 1 + len));
    wireLength += 1 + len;
    p += 1 + len;
  }
  throw new Error(`pointer loop in name at ${off}`);
}

export const sameLabels = (a: Buffer[], b: Buffer[]) => a.length === b.length && a.every((l, i) => l.equals(b[i]!));

export interface ReplyRecord {
  owner: Buffer[];
  type: number;
  section: 'answer' | 'authority' | 'additional';
  /** Where the record's data starts in the reply. */
  rdataOffset: number;
}

/**
 * Walks a reply: header, the question, every record's owner name (raw labels) and rdata bounds.
 * Throws on anything malformed (label > 63, name > 255, records running past the end, trailing bytes).
 */
export function walkReply(reply: Buffer): { id: number; flags: number; question: Buffer[]; qtype: number; records: ReplyRecord[] } {
  if (reply.length < 12) throw new Error('reply shorter than a header');
  const qd = reply.readUInt16BE(4);
  const counts = [reply.readUInt16BE(6), reply.readUInt16BE(8), reply.readUInt16BE(10)];
  if (qd !== 1) throw new Error(`${qd} questions in the reply`);
  const q = readName(reply, 12);
  const qtype = reply.readUInt16BE(q.end);
  let p = q.end + 4;
  const records: ReplyRecord[] = [];
  const sections = ['answer', 'authority', 'additional'] as const;
  for (let s = 0; s < 3; s++) {
    for (let i = 0; i < counts[s]!; i++) {
      const n = readName(reply, p);
      if (n.end + 10 > reply.length) throw new Error('record header runs past the end');
      const type = reply.readUInt16BE(n.end);
      const rdlen = reply.readUInt16BE(n.end + 8);
      if (n.end + 10 + rdlen > reply.length) throw new Error('rdata runs past the end');
      records.push({ owner: n.labels, type, section: sections[s]!, rdataOffset: n.end + 10 });
      p = n.end + 10 + rdlen;
    }
  }
  if (p !== reply.length) throw new Error(`${reply.length - p} bytes after the last record`);
  return { id: reply.readUInt16BE(0), flags: reply.readUInt16BE(2), question: q.labels, qtype, records };
}

/** A query whose name is given as raw labels (any bytes), for names dns-packet cannot write. */
export function rawQuery(id: number, labels: Buffer[], qtype: number, ednsUdpSize?: number): Buffer {
  const parts: Buffer[] = [];
  const header = Buffer.alloc(12);
  header.writeUInt16BE(id, 0);
  header.writeUInt16BE(0x0100, 2);
  header.writeUInt16BE(1, 4);
  if (ednsUdpSize !== undefined) header.writeUInt16BE(1, 10);
  parts.push(header);
  for (const l of labels) parts.push(Buffer.from([l.length]), l);
  const tail = Buffer.alloc(5);
  tail.writeUInt16BE(qtype, 1);
  tail.writeUInt16BE(1, 3);
  parts.push(tail);
  if (ednsUdpSize !== undefined) {
    const opt = Buffer.alloc(11);
    opt.writeUInt16BE(41, 1);
    opt.writeUInt16BE(ednsUdpSize, 3);
    parts.push(opt);
  }
  return Buffer.concat(parts);
}

export const labelsOf = (name: string, encoding: BufferEncoding = 'latin1') => name.split('.').map((l) => Buffer.from(l, encoding));
