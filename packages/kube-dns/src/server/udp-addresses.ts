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
}

/**
 * An address that cannot be bound yet: an IPv6 address still in duplicate address detection
 * (tentative, about 1-2 s after it was added) or one just removed. The next rescan tries again.
 */
const NOT_YET = new Set(['EADDRNOTAVAIL', 'EINVAL']);

export class UdpEveryAddress {
  private readonly sockets = new Map<string, UdpListener>();
  private timer: NodeJS.Timeout | undefined;
  private port = 0;
  private closing = false;
  private scanning = false;
  /** Addresses whose bind failed, told once each until they succeed. */
  private readonly failed = new Set<string>();

  constructor(
    private readonly handler: Pick<DnsHandler, 'handle'>,
    private readonly log: Logger,
    private readonly o: UdpAddressesOptions,
  ) {}

  /**
   * Binds every address on `port` (0: the first bind picks one, the others take it). A port in
   * use on any address fails the start, as a wildcard bind would; an address not bindable yet
   * is left to the rescan. Resolves with the port.
   */
  async listen(port: number): Promise<number> {
    this.port = port;
    for (const address of this.addresses()) {
      try {
        await this.add(address);
      } catch (e) {
        if (!NOT_YET.has((e as NodeJS.ErrnoException).code ?? '')) {
          await this.close(0);
          throw e;
        }
        this.notYet(address, e as Error);
      }
    }
    if (this.sockets.size === 0) throw new Error('no local address could be bound');
    this.timer = setInterval(() => void this.rescan(), this.o.rescanMs);
    this.timer.unref();
    return this.port;
  }

  /** The addresses served now. */
  get bound(): string[] {
    return [...this.sockets.keys()];
  }

  /** Binds the addresses that appeared, closes those that went. */
  async rescan(): Promise<void> {
    if (this.closing || this.scanning) return;
    this.scanning = true;
    try {
      const now = new Set(this.addresses());
      for (const [address, l] of this.sockets) {
        if (now.has(address)) continue;
        this.sockets.delete(address);
        this.log.info({ address }, 'address gone: no longer serving DNS over UDP on it');
        await l.close(1000);
      }
      for (const address of now) {
        if (this.sockets.has(address) || this.closing) continue;
        try {
          await this.add(address);
          this.log.info({ address, port: this.port }, 'new address: serving DNS over UDP on it');
        } catch (e) {
          this.notYet(address, e as Error);
        }
      }
    } finally {
      this.scanning = false;
    }
  }

  async close(timeoutMs = 4000): Promise<void> {
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
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

  private notYet(address: string, e: Error): void {
    if (this.failed.has(address)) return;
    this.failed.add(address);
    this.log.warn({ address, err: e.message, retryInMs: this.o.rescanMs }, 'cannot serve DNS over UDP on this address yet');
  }
}
