// UDP on every local address, one socket each, for a wildcard --dns-bind-address (0.0.0.0, the
// default, or ::).
//
// A reply must leave from the address its query was sent to, or the client drops it (glibc and
// dig use a connected socket). A socket bound to the wildcard cannot see to that from node:
// dgram has no IP_PKTINFO, so the kernel picks the reply's source by route, the wrong one on a
// host with several addresses (hostNetwork, secondary IPs, IPv6 with several prefixes). The
// original's DNS library reads PKTINFO; BIND binds each address instead, as done here: the
// addresses there are at start, then those that come and go, rescanned every rescanMs. TCP
// needs none of this (a connection's replies leave from its own address) and stays on the
// wildcard.
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import type { Logger } from '@kube-dns/config';
import type { DnsHandler } from './handler.js';
import { UdpListener } from './udp.js';

/**
 * The host's addresses, IPv4 and IPv6, a link-local one with its interface (fe80::1%eth0). Not
 * kube-proxy's kube-ipvs0 (hostNetwork with IPVS): it holds every Service IP of the cluster, and
 * IPVS, not a socket, answers there.
 */
export function localAddresses(ifaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces()): string[] {
  const out = new Set<string>();
  for (const [name, list] of Object.entries(ifaces)) {
    if (name === 'kube-ipvs0') continue;
    for (const a of list ?? []) {
      if (a.family === 'IPv4') out.add(a.address);
      else if (a.family === 'IPv6') out.add(a.scopeid ? `${a.address}%${name}` : a.address);
    }
  }
  return [...out];
}

export interface UdpAddressesOptions {
  rescanMs: number;
  /** The addresses to serve (tests); localAddresses by default. */
  addresses?: () => string[];
  /**
   * IPv6 addresses are a bonus, not a must (the default 0.0.0.0: the original asked for IPv4):
   * one that cannot be bound for any reason (its port held by another process, say) is
   * skipped with a warning rather than failing the start.
   */
  ipv6Optional?: boolean;
}

/** Retries of addresses not bindable yet, every QUICK_RETRY_MS, before the rescan takes over. */
const QUICK_RETRY_MS = 250;
const QUICK_RETRIES = 40;

/**
 * An address that cannot be bound yet: an IPv6 address still in duplicate address detection
 * (tentative, about 1-2 s after it was added) or one just removed. It is tried again every
 * QUICK_RETRY_MS for 10 s (a pod's IPv6 address may still be tentative when kube-dns starts),
 * then at each rescan.
 */
const NOT_YET = new Set(['EADDRNOTAVAIL', 'EINVAL']);

export class UdpEveryAddress {
  private readonly sockets = new Map<string, UdpListener>();
  private timer: NodeJS.Timeout | undefined;
  private port = 0;
  private closing = false;
  private scanning: Promise<void> | undefined;
  private quickTimer: NodeJS.Timeout | undefined;
  private quickRetries = 0;
  /** Addresses whose bind failed, told once each until they succeed or go. */
  private readonly failed = new Set<string>();

  constructor(
    private readonly handler: Pick<DnsHandler, 'handle'>,
    private readonly log: Logger,
    private readonly o: UdpAddressesOptions,
  ) {}

  /**
   * Binds every address on `port` (0: the first bind picks one, the others take it). A port in
   * use on any address fails the start, as a wildcard bind would (an IPv6 one only without
   * ipv6Optional); an address not bindable yet is retried. Resolves with the port.
   */
  async listen(port: number): Promise<number> {
    this.port = port;
    for (const address of this.addresses()) {
      try {
        await this.add(address);
      } catch (e) {
        if (!this.retryable(address, e as NodeJS.ErrnoException)) {
          await this.close(0);
          throw e;
        }
        this.notYet(address, e as Error);
      }
    }
    if (this.sockets.size === 0) {
      await this.close(0);
      throw new Error('no local address could be bound');
    }
    this.timer = setInterval(() => void this.rescan(), this.o.rescanMs);
    this.timer.unref();
    return this.port;
  }

  /** The addresses served now. */
  get bound(): string[] {
    return [...this.sockets.keys()];
  }

  /** Binds the addresses that appeared, closes those that went. Never throws (a timer calls it). */
  rescan(): Promise<void> {
    if (this.closing) return Promise.resolve();
    this.scanning ??= this.scan().finally(() => (this.scanning = undefined));
    return this.scanning;
  }

  private async scan(): Promise<void> {
    try {
      const now = new Set(this.addresses());
      const gone = [...this.sockets].filter(([address]) => !now.has(address));
      for (const [address] of gone) {
        this.sockets.delete(address);
        this.log.info({ address }, 'address gone: no longer serving DNS over UDP on it');
      }
      for (const address of this.failed) if (!now.has(address)) this.failed.delete(address);
      await Promise.all(gone.map(([, l]) => l.close(1000)));
      for (const address of now) {
        if (this.sockets.has(address) || this.closing) continue;
        try {
          await this.add(address);
          this.log.info({ address, port: this.port }, 'new address: serving DNS over UDP on it');
        } catch (e) {
          this.notYet(address, e as Error);
        }
      }
      if (this.failed.size === 0) this.quickRetries = 0; // the next tentative address is retried quickly too
    } catch (e) {
      // the interface list itself failed (EMFILE when descriptors run out): the next scan retries
      this.log.warn({ err: (e as Error).message }, 'cannot list the local addresses; trying again at the next rescan');
    }
  }

  async close(timeoutMs = 4000): Promise<void> {
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    if (this.quickTimer) clearTimeout(this.quickTimer);
    await this.scanning; // a bind in progress lands in sockets, closed below
    const all = [...this.sockets.values()];
    this.sockets.clear();
    await Promise.all(all.map((l) => l.close(timeoutMs)));
  }

  private addresses(): string[] {
    return (this.o.addresses ?? localAddresses)();
  }

  private async add(address: string): Promise<void> {
    const l = new UdpListener(this.handler, this.log);
    try {
      this.port = await l.listen(address, this.port);
    } catch (e) {
      await l.close(0).catch(() => undefined);
      throw e;
    }
    this.sockets.set(address, l);
    this.failed.delete(address);
  }

  /** Whether a failed bind of `address` waits for a retry rather than failing the start. */
  private retryable(address: string, e: NodeJS.ErrnoException): boolean {
    return NOT_YET.has(e.code ?? '') || (this.o.ipv6Optional === true && address.includes(':'));
  }

  private notYet(address: string, e: Error): void {
    if (!this.failed.has(address)) {
      this.failed.add(address);
      this.log.warn({ address, err: e.message }, 'cannot serve DNS over UDP on this address yet; trying again');
    }
    if (this.quickTimer === undefined && this.quickRetries < QUICK_RETRIES && !this.closing) {
      this.quickRetries++;
      this.quickTimer = setTimeout(() => {
        this.quickTimer = undefined;
        void this.rescan();
      }, QUICK_RETRY_MS);
      this.quickTimer.unref();
    }
  }
}
