// dnsmasq-nanny: flags → Nanny → signals and exit codes.
//   0   SIGTERM/SIGINT: dnsmasq stopped cleanly (or -help)
//   1   start-up failed (state directory, conflicting dnsmasq arguments)
//   2   bad flags
//   255 dnsmasq could not be kept running (the original's exit status when dnsmasq died)
//   70  an exception nothing caught (logged with its stack; dnsmasq is killed first)
import { FlagError, createLogger, logProcessWarnings } from '@kube-dns/config';
import { killProcessGroup } from './dnsmasq-process.js';
import { Nanny, StartupError } from './nanny.js';
import { parseNannyOptions } from './options.js';
import { reportPodEvents } from './pod-events.js';
import { nannyVersion } from './version.js';

/**
 * Signals another process may send that end a process by default. Not SIGUSR1 (node's
 * inspector), SIGPROF (V8's profiler), nor the ones a fault raises (ABRT, TRAP, SYS, SEGV...):
 * a JS handler would keep the process alive after one.
 */
const FATAL_SIGNALS: NodeJS.Signals[] = ['SIGHUP', 'SIGQUIT', 'SIGUSR2', 'SIGALRM', 'SIGPWR', 'SIGVTALRM', 'SIGXCPU', 'SIGXFSZ'];

async function main(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseNannyOptions(argv);
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    process.stderr.write(`dnsmasq-nanny: ${e.message}\nRun dnsmasq-nanny -help for the flags.\n`);
    process.exit(2);
  }
  if (parsed.kind === 'help') {
    process.stdout.write(parsed.text);
    process.exit(0);
  }
  if (parsed.kind === 'version') {
    const v = nannyVersion();
    process.stdout.write(parsed.raw ? `${JSON.stringify(v)}\n` : `Kube-DNS ${v}\n`);
    process.exit(0);
  }
  const options = parsed.options;
  const log = createLogger('dnsmasq-nanny', options.verbosity);
  logProcessWarnings(log);
  const nanny = new Nanny(options, log);
  const events = reportPodEvents(nanny, options.kubecfgFile, log);
  // An exception nothing caught leaves the supervisor in an unknown state: log it with its stack,
  // take dnsmasq down with us (so no orphan keeps the port) and exit non-zero; the kubelet
  // restarts the container. Unhandled rejections arrive here too (Node's default).
  process.on('uncaughtException', (e) => {
    log.fatal({ err: e }, 'uncaught exception: exiting');
    process.exit(70);
  });
  // dnsmasq runs in a process group of its own (dnsmasq-process.ts), out of reach of execa's
  // clean-up: whatever way the nanny exits, dnsmasq and its TCP children go first. The signals
  // whose default is to end the process keep that meaning (the nanny dies of the signal, after
  // the clean-up); SIGTERM and SIGINT have their own handling above.
  process.on('exit', () => killProcessGroup(nanny.dnsmasqPid));
  for (const sig of FATAL_SIGNALS) {
    const die = () => {
      killProcessGroup(nanny.dnsmasqPid);
      process.removeListener(sig, die);
      process.kill(process.pid, sig);
    };
    process.on(sig, die);
  }

  let exiting = false;
  const shutdown = async (code: number, reason: string) => {
    if (exiting) return;
    exiting = true;
    log.info({ reason }, 'stopping dnsmasq');
    await nanny.stop().catch((e: unknown) => log.error({ err: (e as Error).message }, 'error while stopping'));
    await events?.flush(2000);
    log.info({ code }, 'exiting');
    process.exit(code);
  };
  // SIGTERM: dnsmasq keeps answering for -lameduck while kube-dns (same pod) fails its readiness
  // and the Service moves clients away; then it stops. A second signal cuts the wait short.
  let lameduck: NodeJS.Timeout | undefined;
  const onSignal = (signal: string) => {
    if (exiting) return;
    if (lameduck || options.lameduckMs === 0) {
      clearTimeout(lameduck);
      void shutdown(0, signal);
      return;
    }
    log.info({ signal, lameduckMs: options.lameduckMs }, 'lameduck: dnsmasq keeps answering until the period ends, then stops');
    lameduck = setTimeout(() => void shutdown(0, signal), options.lameduckMs);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  nanny.on('fatal', (e) => {
    log.fatal(e.message);
    void shutdown(255, 'dnsmasq keeps failing');
  });

  try {
    await nanny.start();
  } catch (e) {
    const err = e as Error;
    log.fatal({ err: err.message }, err instanceof StartupError ? err.message : `cannot start: ${err.message}`);
    await nanny.stop().catch(() => {});
    process.exit(1);
  }
  log.info({ pid: nanny.dnsmasqPid, configDir: options.configDir, serversFile: nanny.serversFile, hostsDir: nanny.hostsDir }, 'dnsmasq-nanny running');
}

void main(process.argv.slice(2));
