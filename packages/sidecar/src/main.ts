// The sidecar binary: flags → startSidecar; SIGTERM/SIGINT stop it and exit 0.
import { FlagError, createLogger, formatHostPort, logProcessWarnings } from '@kube-dns/config';
import { type ParsedArgs, parseSidecarArgs } from './options.js';
import { startSidecar } from './sidecar.js';
import { sidecarVersion } from './version.js';

const STOP_WAIT_MS = 1000;

async function main(): Promise<void> {
  let args: ParsedArgs;
  try {
    args = parseSidecarArgs(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof FlagError)) throw e;
    process.stderr.write(`sidecar: ${e.message}\nRun 'sidecar --help' for the flags.\n`);
    process.exit(2);
  }
  if (args.kind === 'help') {
    process.stdout.write(args.text);
    return;
  }
  if (args.kind === 'version') {
    const v = sidecarVersion();
    process.stdout.write(args.raw ? `${JSON.stringify(v)}\n` : `Kube-DNS ${v}\n`);
    return;
  }
  const log = createLogger('sidecar', args.options.verbosity);
  logProcessWarnings(log);
  process.on('uncaughtException', (e) => {
    log.fatal({ err: e }, 'uncaught exception');
    process.exit(1);
  });
  process.on('unhandledRejection', (e) => {
    log.fatal({ err: e }, 'unhandled rejection');
    process.exit(1);
  });
  if (args.options.probes.length === 0) log.warn('no --probe given: /healthcheck/<label> answers 404 for every label');

  let sidecar;
  try {
    sidecar = await startSidecar(args.options, { logger: log });
  } catch (e) {
    log.fatal({ err: (e as Error).message }, `cannot serve HTTP on ${formatHostPort(args.options.prometheusAddr, args.options.prometheusPort)}`);
    process.exit(1);
  }
  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    signalled = true;
    log.info({ signal }, 'stopping');
    // a poll or probe still waiting on a slow server is not worth waiting for (the original has
    // no handler at all: it exits at once); a second is enough for the HTTP server to close
    const bound = setTimeout(() => process.exit(0), STOP_WAIT_MS);
    void sidecar.stop().then(() => {
      clearTimeout(bound);
      process.exit(0);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

void main();
