// Mutations of one input, libFuzzer-style: bit flips, interesting values, inserted, deleted and
// duplicated spans, splices with another corpus entry, and tokens from the target's dictionary
// (DNS: compression pointers and label lengths; text: JSON and hosts-file syntax).
import type { Random } from './random.js';

const INTERESTING_8 = [0x00, 0x01, 0x02, 0x3f, 0x40, 0x7f, 0x80, 0xc0, 0xfe, 0xff];
const INTERESTING_16 = [0x0000, 0x0001, 0x0002, 0x00ff, 0x0100, 0x0200, 0x01ff, 0x1000, 0x7fff, 0x8000, 0xc00c, 0xc000, 0xffff, 512, 1232, 4096];
const MAX_LEN = 4096;

export function mutate(input: Buffer, rnd: Random, corpus: readonly Buffer[], dictionary: readonly Buffer[]): Buffer {
  let b: Buffer = Buffer.from(input);
  const rounds = 1 + rnd.below(4);
  for (let i = 0; i < rounds; i++) b = mutateOnce(b, rnd, corpus, dictionary);
  return b.length > MAX_LEN ? b.subarray(0, MAX_LEN) : b;
}

function mutateOnce(b: Buffer, rnd: Random, corpus: readonly Buffer[], dictionary: readonly Buffer[]): Buffer {
  const at = (extra = 0) => rnd.below(b.length + extra);
  switch (rnd.below(11)) {
    case 0: // flip a bit
      if (b.length) b[at()]! ^= 1 << rnd.below(8);
      return b;
    case 1: // a random byte
      if (b.length) b[at()] = rnd.below(256);
      return b;
    case 2: // an interesting byte
      if (b.length) b[at()] = rnd.pick(INTERESTING_8);
      return b;
    case 3: // an interesting 16-bit value (counts, lengths, pointers), big-endian as on the wire
      if (b.length >= 2) b.writeUInt16BE(rnd.pick(INTERESTING_16), rnd.below(b.length - 1));
      return b;
    case 4: {
      // insert random bytes
      const p = at(1);
      const n = 1 + rnd.below(8);
      const ins = Buffer.alloc(n);
      for (let i = 0; i < n; i++) ins[i] = rnd.below(256);
      return Buffer.concat([b.subarray(0, p), ins, b.subarray(p)]);
    }
    case 5: {
      // delete a span
      if (!b.length) return b;
      const p = at();
      const n = 1 + rnd.below(Math.min(16, b.length - p));
      return Buffer.concat([b.subarray(0, p), b.subarray(p + n)]);
    }
    case 6: {
      // duplicate a span somewhere
      if (!b.length) return b;
      const p = at();
      const n = 1 + rnd.below(Math.min(32, b.length - p));
      const q = at(1);
      return Buffer.concat([b.subarray(0, q), b.subarray(p, p + n), b.subarray(q)]);
    }
    case 7: {
      // splice: our head with another entry's tail
      const other = corpus.length ? rnd.pick(corpus) : b;
      return Buffer.concat([b.subarray(0, at(1)), other.subarray(rnd.below(other.length + 1))]);
    }
    case 8:
    case 9: {
      // a dictionary token, inserted or overwriting
      if (!dictionary.length) return b;
      const tok = rnd.pick(dictionary);
      const p = at(1);
      if (rnd.chance(0.5)) return Buffer.concat([b.subarray(0, p), tok, b.subarray(p)]);
      return Buffer.concat([b.subarray(0, p), tok, b.subarray(Math.min(b.length, p + tok.length))]);
    }
    default:
      // truncate
      return b.subarray(0, at(1));
  }
}
