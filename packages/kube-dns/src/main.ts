// The kube-dns binary: flags → startKubeDns → run until SIGTERM.
import { FlagError, createLogger, usage, logProcessWarnings } from '@kube-dns/config';
import { startKubeDns } from './app.js';
import { settleHeap } from './runtime/heap-settler.js';
import { scavengeOnLoopThread } from './runtime/scavenge.js';
import { FLAGS, parseOptions } from './options.js';
import { VERSION } from './version.js';

async function main(): Promise<number> {
  let o;
  try {
    o = parseOptions(process.argv.slice(2));
  } catch (e) {
    if (e instanceof FlagError) {
      process.stderr.write(`kube-dns: ${e.message}\nRun 'kube-dns --help' for the flags.\n`);
      return 2;
    }
    throw e;
  }
  if (o.help) {
    process.stdout.write(usage('kube-dns', 'Serves Kubernetes DNS-Based Service Discovery (schema 1.1.0) from list/watch of Services and EndpointSlices.', FLAGS));
    return 0;
  }
  if (o.version !== undefined) {
    process.stdout.write(o.version === 'raw' ? `${JSON.stringify(VERSION)}\n` : `Kube-DNS ${VERSION}\n`);
    return 0;
  }
  scavengeOnLoopThread();
  const log = createLogger('kube-dns', o.verbosity);
  logProcessWarnings(log);
  log.info({ version: VERSION, flags: process.argv.slice(2) }, 'starting kube-dns');
  if (o.federationsGiven) log.warn('--federations is obsolete (Kubernetes federation v1 is gone): accepted and ignored, its names are answered NXDOMAIN');
  const env = process.env;
  let metricsPort = env.PROMETHEUS_PORT ? Number(env.PROMETHEUS_PORT) : undefined;
  if (metricsPort !== undefined && !(Number.isInteger(metricsPort) && metricsPort >= 0 && metricsPort <= 65535)) {
    // Kubernetes itself sets PROMETHEUS_PORT=tcp://<ip>:<port> in every pod of a namespace with a
    // Service named prometheus, when the manifest does not set it: the original then ran without
    // its metrics listener, and so do we (a crash loop would take DNS down for a metrics port)
    log.warn({ PROMETHEUS_PORT: env.PROMETHEUS_PORT }, 'PROMETHEUS_PORT is not a port number: no metrics listener (set it to a port, 10055 in the manifest)');
    metricsPort = undefined;
  }
  // the original's envOrDefault: an empty value is the default. A metric name part that is not
  // [a-zA-Z_][a-zA-Z0-9_]* would make Prometheus refuse every scrape: said at start instead
  const metricsEnv = (name: string, test: RegExp, want: string): string | undefined | false => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    if (test.test(v)) return v;
    process.stderr.write(`kube-dns: ${name}=${v}: ${want}\n`);
    return false;
  };
  const metricsPath = metricsEnv('PROMETHEUS_PATH', /^\/[A-Za-z0-9._~/-]*$/, 'not a URL path (/ followed by letters, digits and ._~/-)');
  const skydnsNamespace = metricsEnv('PROMETHEUS_NAMESPACE', /^[a-zA-Z_][a-zA-Z0-9_]*$/, 'not a Prometheus metric name part ([a-zA-Z_][a-zA-Z0-9_]*)');
  const skydnsSubsystem = metricsEnv('PROMETHEUS_SUBSYSTEM', /^[a-zA-Z_][a-zA-Z0-9_]*$/, 'not a Prometheus metric name part ([a-zA-Z_][a-zA-Z0-9_]*)');
  if (metricsPath === false || skydnsNamespace === false || skydnsSubsystem === false) return 2;
  let instance;
  try {
    instance = await startKubeDns(o, { log, metricsPort, metricsPath, skydnsNamespace, skydnsSubsystem });
  } catch (e) {
    log.fatal({ err: (e as Error).message }, 'cannot start');
    return 1;
  }
  // the heap a flood grew back once quiet (runtime/heap-settler.ts)
  const heap = settleHeap({ log });
  // The initial list leaves its garbage (the parsed list bodies) in the old space. Collect it
  // once, the moment the sync completes: 'synced' is emitted in the tick that makes /readiness
  // say ready, so the pause comes before any traffic is sent our way, whatever the zone's size.
  if (!instance.sync.synced) instance.sync.once('synced', () => heap.collectNow());
  return new Promise<number>((resolve) => {
    let stopping = false;
    let lameduckTimer: NodeJS.Timeout | undefined;
    const finish = () => {
      if (lameduckTimer) clearTimeout(lameduckTimer);
      lameduckTimer = undefined;
      log.info('stopping: no new queries, answering those in flight');
      const hard = setTimeout(() => resolve(0), 5000);
      hard.unref();
      instance.stop().then(
        () => resolve(0),
        (e: unknown) => {
          log.error({ err: String(e) }, 'error while stopping');
          resolve(0);
        },
      );
    };
    const stop = (signal: string) => {
      // a second signal during the lameduck period cuts it short
      if (stopping) return lameduckTimer ? finish() : undefined;
      stopping = true;
      instance.enterLameduck();
      log.info({ signal, lameduckMs: o.lameduckMs }, 'lameduck: /readiness fails from now on; still answering queries until the period ends');
      lameduckTimer = setTimeout(finish, o.lameduckMs);
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  });
}

// An exception nothing caught leaves the process in a state nobody designed (a half-applied
// update, a listener gone): log it with its stack and exit non-zero so the kubelet restarts a
// clean process, rather than serve on in an unknown state. (Unhandled promise rejections end up
// here too: Node's default --unhandled-rejections=throw.) Written synchronously: nothing else
// runs before the exit.
process.on('uncaughtException', (e) => {
  process.stderr.write(`${JSON.stringify({ level: 60, time: Date.now(), component: 'kube-dns', msg: 'uncaught exception: exiting', err: String((e as Error)?.stack ?? e) })}\n`);
  process.exit(70);
});

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`kube-dns: ${String((e as Error)?.stack ?? e)}\n`);
    process.exit(1);
  },
);
