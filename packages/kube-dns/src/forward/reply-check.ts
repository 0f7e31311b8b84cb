// What an upstream's reply must be before a client gets it: a response, to the question we sent,
// whose sections lie within the message. A reply that is not is treated as that server failing
// (the next one is tried), over UDP and TCP alike: over TCP nothing else checks the question.
import { foldOctet } from '../records/names.js';
import { skipName } from '../server/wire.js';

const QR = 0x8000;

/** The end of the first question in a message we send (one question, no compression), or -1. */
export function questionEnd(msg: Uint8Array): number {
  if (msg.length < 12 || ((msg[4]! << 8) | msg[5]!) === 0) return -1;
  let i = 12;
  while (i < msg.length && msg[i] !== 0) {
    if ((msg[i]! & 0xc0) !== 0) return -1;
    i += msg[i]! + 1;
  }
  return i + 5 <= msg.length ? i + 5 : -1;
}

/**
 * The reply's first question is `q` (a question as we sent it, name to class): the name's
 * letters compared without case, as servers may change them (RFC 4343), every other octet
 * exactly, length octets, type and class included (RFC 5452 9.1).
 */
export function sameQuestion(reply: Uint8Array, q: Uint8Array): boolean {
  if (reply.length < 12 + q.length || ((reply[4]! << 8) | reply[5]!) === 0) return false;
  const nameEnd = q.length - 4;
  // a length octet is at most 63 and never a letter: folding leaves it to the exact comparison
  for (let k = 0; k < nameEnd; k++) if (foldOctet(reply[12 + k]!) !== foldOctet(q[k]!)) return false;
  for (let k = nameEnd; k < q.length; k++) if (reply[12 + k] !== q[k]) return false;
  return true;
}

/** Every record the header counts lies within the message (names, fixed fields, data). */
function wellFormed(reply: Buffer): boolean {
  const u16 = (o: number) => (reply[o]! << 8) | reply[o + 1]!;
  let off = 12;
  for (let i = u16(4); i > 0; i--) {
    off = skipName(reply, off);
    if (off < 0 || off + 4 > reply.length) return false;
    off += 4;
  }
  for (let i = u16(6) + u16(8) + u16(10); i > 0; i--) {
    off = skipName(reply, off);
    if (off < 0 || off + 10 > reply.length) return false;
    off += 10 + u16(off + 8);
    if (off > reply.length) return false;
  }
  return true;
}

/**
 * Why `reply` cannot be relayed as the answer to question `q` (see sameQuestion), or undefined
 * when it can; 'truncated' for a reply with TC whose records run past its end (some servers cut
 * the message at the limit and leave the counts): the caller sends the question back with TC.
 */
export function replyProblem(reply: Buffer, q: Uint8Array): string | 'truncated' | undefined {
  if (reply.length < 12 || (((reply[2]! << 8) | reply[3]!) & QR) === 0) return 'a reply that is not a DNS response';
  if (!sameQuestion(reply, q)) return 'a reply to another question';
  if (!wellFormed(reply)) return reply[2]! & 0x02 ? 'truncated' : 'a malformed reply (records past its end)';
  return undefined;
}
