// DNS NOTIFY (RFC 1996) to the secondaries of --transfer-to: "the zone changed, come and get it".
// Over UDP, retried until the secondary answers (at most 5 tries, 1 s apart), never blocking anything.
import { createSocket, type Socket } from 'node:dgram';
import { randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import * as dnsPacket from 'dns-packet';
import type { Logger, Nameserver } from '@kube-dns/config';
import { normalizeIp } from '../records/names.js';

const OPCODE_NOTIFY = 4;

const TRIES = 5;
const RETRY_MS = 1000;

export interface NotifyStats {
  sent: number;
  acknowledged: number;
  failed: number;
}

export class Notifier {
  readonly stats: NotifyStats = { sent: 0, acknowledged: 0, failed: 0 };
  private readonly sockets = new Map<4 | 6, Socket>();
  /** id → what to do when the answer comes (its rcode), and from where it must come */
  private readonly waiting = new Map<number, { from: Nameserver; answered: (rcode: number) => void }>();
  /**
   * Secondary and zone (`host:port zone`) whose last NOTIFY failed and was logged: the next
   * failures are logged at debug until one is acknowledged. A secondary down, or one that does
   * not serve every zone (an external zone it is not configured for answers NOTAUTH), would
   * otherwise log a warning with every change of the zones.
   */
  private readonly failing = new Set<string>();
  private stopped = false;

  /**
   * `source`: the address we serve on (--dns-bind-address). A secondary takes a NOTIFY only from
   * an address it transfers from (BIND: "refused notify from non-primary"), so when we serve on
   * one address our NOTIFYs leave from it, as BIND's notify-source; from a wildcard, the kernel
   * picks the route's address.
   */
  constructor(
    private readonly log: Logger,
    private readonly source?: string,
  ) {}

  private socket(family: 4 | 6): Socket {
    let s = this.sockets.get(family);
    if (!s) {
      s = createSocket(family === 4 ? 'udp4' : 'udp6');
      const src = this.source;
      // sends wait for the bind (dgram queues them)
      if (src && isIP(src) === family && src !== '0.0.0.0' && src !== '::') s.bind({ address: src, port: 0 });
      s.on('message', (msg, rinfo) => {
        if (msg.length < 12) return;
        const w = this.waiting.get(msg.readUInt16BE(0));
        // an answer (QR) to a NOTIFY, from the secondary it was sent to (RFC 1996 3.8)
        if (!w || !(msg[2]! & 0x80) || ((msg[2]! >> 3) & 0xf) !== OPCODE_NOTIFY) return;
        if (rinfo.port !== w.from.port || normalizeIp(rinfo.address) !== normalizeIp(w.from.host)) return;
        w.answered(msg[3]! & 0xf);
      });
      const sock = s;
      sock.on('error', (e: NodeJS.ErrnoException) => {
        this.log.warn({ err: e.message }, 'NOTIFY socket error');
        // a failed bind (the address gone from the pod): dgram would send the next NOTIFY from the
        // kernel's address, refused by the secondary, for good. The next one gets a fresh socket
        if (e.syscall === 'bind' && this.sockets.get(family) === sock) {
          this.sockets.delete(family);
          sock.close();
        }
      });
      sock.unref();
      this.sockets.set(family, sock);
    }
    return s;
  }

  /** Tells `to` that `zone` changed (serial in the answer section, as BIND does). */
  notify(to: Nameserver, zone: string, serialSoa: dnsPacket.Answer): void {
    if (this.stopped) return;
    let id = randomInt(0, 65536);
    while (this.waiting.has(id)) id = (id + 1) & 0xffff;
    const msg = dnsPacket.encode({
      type: 'query',
      id,
      flags: (OPCODE_NOTIFY << 11) | dnsPacket.AUTHORITATIVE_ANSWER,
      questions: [{ name: zone, type: 'SOA', class: 'IN' }],
      answers: [serialSoa],
    });
    const family = to.family === 6 ? 6 : 4;
    const key = `${to.host}:${to.port} ${zone}`;
    const failed = (fields: Record<string, unknown>, msg: string): void => {
      this.stats.failed++;
      const again = this.failing.has(key);
      this.failing.add(key);
      this.log[again ? 'debug' : 'warn']({ zone, to: `${to.host}:${to.port}`, ...fields }, again ? msg : `${msg} (logged again once it has acknowledged one)`);
    };
    let tries = 0;
    let timer: NodeJS.Timeout | undefined;
    const send = (): void => {
      if (this.stopped) return;
      if (tries++ >= TRIES) {
        this.waiting.delete(id);
        failed({ tries: TRIES }, 'NOTIFY not acknowledged; the secondary will still refresh on its SOA timer');
        return;
      }
      this.stats.sent++;
      // the family's socket as it is now (one whose bind failed was replaced)
      this.socket(family).send(msg, to.port, to.host);
      timer = setTimeout(send, RETRY_MS);
      timer.unref();
    };
    this.waiting.set(id, {
      from: to,
      answered: (rcode) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        if (rcode === 0) {
          this.stats.acknowledged++;
          if (this.failing.delete(key)) this.log.info({ zone, to: `${to.host}:${to.port}` }, 'NOTIFY acknowledged again');
          return;
        }
        // REFUSED (we are not its primary, or its ACL) or NOTAUTH (not a zone it serves): trying again will not help
        failed({ rcode }, 'NOTIFY refused by the secondary; it will refresh on its SOA timer only');
      },
    });
    send();
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
    this.waiting.clear();
  }
}
