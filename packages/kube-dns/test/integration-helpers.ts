// Starts the fake API server and kube-dns (in-process, the production wiring) on free loopback ports.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger, createLogger } from '@kube-dns/config';
import { query, type QueryOptions } from '@kube-dns/dns-client';
import { startFakeApiServer, tempDir, type FakeApiServer } from '@kube-dns/testkit';
import { startKubeDns, type KubeDnsInstance } from '../src/app.js';
import { parseOptions } from '../src/options.js';

export interface Cluster {
  api: FakeApiServer;
  dns: KubeDnsInstance;
  server: { host: string; port: number };
  configDir: string;
  ask(name: string, type: QueryOptions['type'], more?: Partial<QueryOptions>): ReturnType<typeof query>;
  http(path: string): Promise<{ status: number; body: string }>;
  stop(): Promise<void>;
}

export async function startCluster(opts: { log?: import('@kube-dns/config').Logger; args?: string[]; configFiles?: Record<string, string>; resolvConf?: string; seed?: (api: FakeApiServer) => unknown; forwardTimeoutMs?: number; kubeSync?: import('../src/app.js').StartExtras['kubeSync']; extras?: Partial<import('../src/app.js').StartExtras> } = {}): Promise<Cluster> {
  const api = await startFakeApiServer();
  await opts.seed?.(api);
  const dir = await tempDir('kube-dns-it-');
  const configDir = join(dir.path, 'config');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(configDir);
  for (const [k, v] of Object.entries(opts.configFiles ?? {})) await writeFile(join(configDir, k), v);
  const resolvConf = join(dir.path, 'resolv.conf');
  await writeFile(resolvConf, opts.resolvConf ?? '');
  const o = parseOptions([
    '--dns-bind-address=127.0.0.1',
    '--dns-port=0',
    '--healthz-bind-address=127.0.0.1',
    '--healthz-port=0',
    `--kubecfg-file=${api.kubeconfigPath}`,
    `--config-dir=${configDir}`,
    '--config-period=200ms',
    ...(opts.args ?? []),
  ]);
  const log = opts.log ?? (process.env.TEST_LOG ? createLogger('kube-dns', 4) : silentLogger());
  const dns = await startKubeDns(o, { log, resolvConfPath: resolvConf, forwardTimeoutMs: opts.forwardTimeoutMs ?? 500, ...(opts.kubeSync && { kubeSync: opts.kubeSync }), ...opts.extras }).catch(async (e: unknown) => {
    // a start that fails leaves nothing behind either
    await api.close();
    await dir.cleanup();
    throw e;
  });
  const server = { host: '127.0.0.1', port: dns.dnsPort };
  return {
    api,
    dns,
    server,
    configDir,
    ask: (name, type, more = {}) => query(server, { name, type, timeoutMs: 3000, ...more }),
    http: async (path) => {
      const r = await fetch(`http://127.0.0.1:${dns.httpPort}${path}`);
      return { status: r.status, body: await r.text() };
    },
    stop: async () => {
      await dns.stop();
      await api.close();
      await dir.cleanup();
    },
  };
}

/** Polls `fn` until it returns true (or throws the last assertion after `ms`). */
export async function eventually(fn: () => Promise<void>, ms = 1000, step = 20): Promise<number> {
  const start = Date.now();
  for (;;) {
    try {
      await fn();
      return Date.now() - start;
    } catch (e) {
      if (Date.now() - start > ms) throw e;
      await new Promise((r) => setTimeout(r, step));
    }
  }
}

export async function waitSynced(c: Cluster, ms = 5000): Promise<void> {
  await eventually(async () => {
    if (!c.dns.sync.synced) throw new Error('not synced');
  }, ms);
}

/**
 * Writes a ConfigMap key as a kubelet does, in one step (a new file renamed over the old): a
 * plain writeFile truncates, then writes, and a read between the two (a file event, the poll)
 * saw the key empty and applied that as the config.
 */
export async function editConfig(c: Pick<Cluster, 'configDir'>, key: string, value: string): Promise<void> {
  const { rename } = await import('node:fs/promises');
  const tmp = join(c.configDir, `.${key}.${process.pid}.tmp`);
  await writeFile(tmp, value);
  await rename(tmp, join(c.configDir, key));
}
