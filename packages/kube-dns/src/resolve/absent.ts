// The common negative answers, decided from the question's bytes before any string is built.
//
// Most of what reaches kube-dns is search-path expansions of names outside the cluster
// (`X.<ns>.svc.<zone>`, `X.svc.<zone>`, `X.<zone>`), nearly all NXDOMAIN. The full path reads the
// name into two strings, slices labels, looks them up in the zone's maps and returns a
// Resolution: garbage and memory walked for a "no". Here the labels are found in the query's own
// bytes and checked against the zone's presence index (records/presence-index.ts); a name is
// called absent only when resolve() would answer it NXDOMAIN, and anything this cannot tell is
// left to resolve(). What it decides (the rules of resolve.ts and services.ts):
//   `<...>.<T>.<zone>`, T not svc, pod, dns or dns-version   → NXDOMAIN (nothing else lives there)
//   `<...>.<svc>.<ns>.svc.<zone>`, no service <svc> in <ns>  → NXDOMAIN
//   `<ns>.svc.<zone>`, no service in <ns>                     → NXDOMAIN
// With --wildcards a `*` as <svc> or <ns> matches other names: left to resolve().
import type { Answer } from 'dns-packet';
import { foldOctet } from '../records/names.js';
import type { PresenceIndex } from '../records/presence-index.js';
import { zoneSoa } from './answers.js';
import type { ResolveOptions } from './types.js';

/** At most 127 labels fit a 255-octet name. */
const MAX_LABELS = 128;
/** Offsets of the question's labels (their length octets). Synchronous use only: shared. */
const starts = new Int32Array(MAX_LABELS);

/** Whether buf[off] is a label whose A-Z-folded octets are `word` (lower-case ASCII). */
function labelIs(buf: Uint8Array, off: number, word: string): boolean {
  if (buf[off] !== word.length) return false;
  for (let i = 0; i < word.length; i++) {
    if (foldOctet(buf[off + 1 + i]!) !== word.charCodeAt(i)) return false;
  }
  return true;
}

/** A label of the single octet `*`. */
function isStar(buf: Uint8Array, off: number): boolean {
  return buf[off] === 1 && buf[off + 1] === 0x2a;
}

export class AbsentNames {
  /** The zone in wire form: `\x07cluster\x05local` (no root octet). */
  private readonly zoneWire: Uint8Array;
  /** Labels of the zone; 0 (decide nothing) for the root. */
  private readonly zoneLabels: number;
  private negativeSoa: Answer | undefined;

  /**
   * Used only while the zone has been synced (before that a cluster name is SERVFAIL) and without
   * --autopath (whose answer to an NXDOMAIN depends on who asks): the handler checks both.
   */
  constructor(
    private readonly opts: ResolveOptions,
    private readonly presence: PresenceIndex,
  ) {
    const zone = opts.zone; // lower-case, no trailing dot
    const labels = zone === '' ? [] : zone.split('.');
    this.zoneLabels = labels.length;
    this.zoneWire = new Uint8Array(zone.length + 1);
    let o = 0;
    for (const l of labels) {
      this.zoneWire[o++] = l.length;
      for (let i = 0; i < l.length; i++) this.zoneWire[o++] = l.charCodeAt(i);
    }
  }

  /** The cluster domain (lower-case, no trailing dot). */
  get zone(): string {
    return this.opts.zone;
  }

  /** The authority record of the reply: the zone's SOA, the very record resolve()'s NXDOMAIN carries. */
  get soa(): Answer {
    // with zone transfer on the serial moves: zoneSoa gives the record of the current one
    return this.opts.dynamicSerial ? zoneSoa(this.opts) : (this.negativeSoa ??= zoneSoa(this.opts));
  }

  /**
   * True when the question's name (in `buf` at nameOffset, checked by parseQuery: labels only,
   * no compression, ending in the root) is one that resolve() answers NXDOMAIN; false when that
   * is not known here.
   */
  isAbsent(buf: Uint8Array, nameOffset: number): boolean {
    let n = 0;
    let off = nameOffset;
    for (let len = buf[off]!; len !== 0; len = buf[off]!) {
      starts[n++] = off;
      off += 1 + len;
    }
    // the zone's labels last, and at least one before them (the apex is left to resolve())
    const z = this.zoneLabels;
    if (z === 0 || n <= z) return false;
    const zoneStart = starts[n - z]!;
    const zw = this.zoneWire;
    if (off - zoneStart !== zw.length) return false;
    for (let i = 0; i < zw.length; i++) {
      // length octets are at most 63 and never a letter: folding leaves them alone
      if (foldOctet(buf[zoneStart + i]!) !== zw[i]) return false;
    }
    const top = starts[n - z - 1]!; // the label just under the zone
    if (!labelIs(buf, top, 'svc')) return !(labelIs(buf, top, 'pod') || labelIs(buf, top, 'dns') || labelIs(buf, top, 'dns-version'));
    if (n - z - 1 === 0) return false; // `svc.<zone>`: NODATA
    const ns = starts[n - z - 2]!;
    if (this.opts.wildcards && isStar(buf, ns)) return false;
    if (n - z - 2 === 0) return !this.presence.mayHaveNamespace(buf, ns + 1, buf[ns]!);
    const svc = starts[n - z - 3]!;
    if (this.opts.wildcards && isStar(buf, svc)) return false;
    return !this.presence.mayHaveService(buf, svc + 1, buf[svc]!, ns + 1, buf[ns]!);
  }
}
