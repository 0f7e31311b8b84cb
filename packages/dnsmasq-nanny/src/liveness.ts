// Is dnsmasq answering at all? A process that exists but is stopped (SIGSTOP), wedged or stuck in
// a loop is invisible to the supervisor (it never exits) while every query to it is lost. So the
// nanny asks dnsmasq a real DNS question it answers by itself (version.bind, class CHAOS: never
// forwarded upstream, so a slow upstream cannot make it fail) and kills a dnsmasq that misses
// `failures` probes in a row; the supervisor then restarts it as after any crash.
//
// A refusal (ICMP port unreachable) is no miss: a stopped or wedged dnsmasq keeps its socket, so
// its probes time out. A refusal means nothing listens where the probe asks: dnsmasq serves
// elsewhere (a port or listen-address set in a config file, which the target, read from the
// arguments, does not see). Killing it for that would crash-loop a healthy dnsmasq.
import { buildQuery, exchange } from '@kube-dns/dns-client';
import type { Logger } from '@kube-dns/config';

export interface LivenessTarget {
  host: string;
  port: number;
}

/**
 * Where dnsmasq serves DNS, from its arguments: --port/-p (default 53; 0 means no DNS at all, so
 * nothing to probe) and the first --listen-address/-a (default loopback, where it also listens).
 */
export function livenessTarget(args: readonly string[]): LivenessTarget | undefined {
  let port = 53;
  let host: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const value = (long: string, short: string): string | undefined => {
      if (a.startsWith(`${long}=`)) return a.slice(long.length + 1);
      if (a === long || a === short) return args[++i];
      if (a.startsWith(short) && a.length > short.length && !a.startsWith('--')) return a.slice(short.length);
      return undefined;
    };
    const p = value('--port', '-p');
    if (p !== undefined) {
      port = Number(p);
      continue;
    }
    const l = value('--listen-address', '-a');
    if (l !== undefined && host === undefined) host = l.split(',')[0];
  }
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return undefined;
  return { host: host ?? '127.0.0.1', port };
}

export interface LivenessOptions {
  target: LivenessTarget;
  intervalMs: number;
  /** Probes missed in a row before dnsmasq is declared hung. */
  failures: number;
  timeoutMs: number;
  log: Logger;
  /** Whether a dnsmasq is up and past its start-up (probing a starting one would be unfair). */
  running(): { pid: number | undefined } | undefined;
  /** Called once per hung process. */
  onHung(pid: number | undefined, why: string): void;
}

export class LivenessProbe {
  private timer: NodeJS.Timeout | undefined;
  private missed = 0;
  private pid: number | undefined;
  private busy = false;
  /** The pid whose probes were refused, told once. */
  private refusedPid: number | undefined;
  probes = 0;
  hungDetected = 0;

  constructor(private readonly o: LivenessOptions) {}

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.o.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async tick(): Promise<void> {
    const proc = this.o.running();
    if (!proc || this.busy) return;
    if (proc.pid !== this.pid) {
      this.pid = proc.pid;
      this.missed = 0;
    }
    this.busy = true;
    let why: string | undefined;
    let refused = false;
    try {
      this.probes++;
      await exchange(this.o.target, buildQuery({ name: 'version.bind', type: 'TXT', class: 'CH', rd: false }), 'udp', this.o.timeoutMs);
    } catch (e) {
      why = (e as Error).message;
      refused = (e as NodeJS.ErrnoException).code === 'ECONNREFUSED';
    } finally {
      this.busy = false;
    }
    if (this.o.running()?.pid !== proc.pid) return; // it exited meanwhile: the supervisor handles that
    if (refused) {
      if (this.refusedPid !== proc.pid) {
        this.refusedPid = proc.pid;
        const { host, port } = this.o.target;
        this.o.log.warn(
          { dnsmasqPid: proc.pid, err: why },
          `the liveness probe finds nothing listening on ${host.includes(':') ? `[${host}]` : host}:${port}, where dnsmasq's arguments say it serves; ` +
            'a hung dnsmasq would still hold that socket, so this is not counted as a miss: set --port and --listen-address as dnsmasq arguments, not in a config file, for the probe to work',
        );
      }
      return;
    }
    if (why === undefined) {
      if (this.missed > 0) this.o.log.info({ dnsmasqPid: proc.pid, missed: this.missed }, 'dnsmasq answers the liveness probe again');
      this.missed = 0;
      return;
    }
    this.missed++;
    this.o.log.warn({ dnsmasqPid: proc.pid, missed: this.missed, of: this.o.failures, err: why }, 'dnsmasq missed a liveness probe');
    if (this.missed >= this.o.failures) {
      this.hungDetected++;
      this.missed = 0;
      this.o.onHung(proc.pid, `${this.o.failures} liveness probes in a row got no answer (last: ${why})`);
    }
  }
}
