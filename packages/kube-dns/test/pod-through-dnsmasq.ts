// The kube-dns pod's DNS path as the manifest runs it: a real dnsmasq with the manifest's
// arguments (after the nanny's "--") in front of kube-dns with the manifest's kubedns arguments,
// and a stand-in upstream for names outside the cluster. Clients ask dnsmasq, as pods do.
import { readFileSync } from 'node:fs';
import yaml from 'js-yaml';
import { query, type QueryOptions } from '@kube-dns/dns-client';
import { startDnsmasq, startTestDnsServer, type FakeApiServer, type RunningDnsmasq, type TestDnsServer } from '@kube-dns/testkit';
import { startCluster, waitSynced, type Cluster } from './integration-helpers.js';

const MANIFEST = new URL('../../../../manifests/kube-dns.yaml', import.meta.url);

type Obj = Record<string, any>;

/** The args of one container of the kube-dns Deployment in manifests/kube-dns.yaml. */
export function manifestArgs(container: 'kubedns' | 'dnsmasq'): string[] {
  const docs = yaml.loadAll(readFileSync(MANIFEST, 'utf8')) as Obj[];
  const d = docs.find((x) => x?.kind === 'Deployment' && x.metadata?.name === 'kube-dns');
  const c = (d?.spec?.template?.spec?.containers as Obj[] | undefined)?.find((x) => x.name === container);
  if (!c) throw new Error(`manifests/kube-dns.yaml: no container ${container}`);
  return c.args as string[];
}

/** kubedns's NODE_OPTIONS in the manifest: the V8 heap flags the container runs with. */
export function manifestNodeOptions(): string {
  const docs = yaml.loadAll(readFileSync(MANIFEST, 'utf8')) as Obj[];
  const d = docs.find((x) => x?.kind === 'Deployment' && x.metadata?.name === 'kube-dns');
  const c = (d?.spec?.template?.spec?.containers as Obj[] | undefined)?.find((x) => x.name === 'kubedns');
  const v = (c?.env as Obj[] | undefined)?.find((e) => e.name === 'NODE_OPTIONS')?.value as unknown;
  if (typeof v !== 'string' || v === '') throw new Error('manifests/kube-dns.yaml: no NODE_OPTIONS for kubedns');
  return v;
}

/** The manifest's kubedns --ttl (the binary's default, 30, when it sets none). */
export function manifestTtl(): number {
  const a = manifestArgs('kubedns').find((x) => x.startsWith('--ttl='));
  return a === undefined ? 30 : Number(a.slice('--ttl='.length));
}

export interface Pod {
  cluster: Cluster;
  api: FakeApiServer;
  dnsmasq: RunningDnsmasq;
  upstream: TestDnsServer;
  /** Asks dnsmasq (the pod's port 53), as a client pod does. */
  ask(name: string, type: QueryOptions['type'], more?: Partial<QueryOptions>): ReturnType<typeof query>;
  /**
   * dnsmasq's cache hits (CHAOS hits.bind), less the hits.bind questions this helper asked
   * before: dnsmasq counts each of those as a hit too, so differences of two readings are exact.
   */
  cacheHits(): Promise<number>;
  stop(): Promise<void>;
}

/** extraKubednsArgs / extraDnsmasqArgs: appended to the manifest's (e.g. the commented-out --autopath pair). */
export async function startPod(opts: { seed?: (api: FakeApiServer) => unknown; upstreamIp?: string; extraKubednsArgs?: string[]; extraDnsmasqArgs?: string[]; upstreamHandler?: Parameters<typeof startTestDnsServer>[0]['handler']; dnsmasqListen?: { host: string; port: number } } = {}): Promise<Pod> {
  // kubedns: the manifest's arguments, except where the test chooses ports and directories
  const own = ['--dns-port=', '--config-dir=', '--v='];
  const kubednsArgs = [...manifestArgs('kubedns').filter((a) => !own.some((p) => a.startsWith(p))), ...(opts.extraKubednsArgs ?? [])];
  const upstream = await startTestDnsServer({ answerIp: opts.upstreamIp ?? '192.0.2.80', ...(opts.upstreamHandler && { handler: opts.upstreamHandler }) });
  let cluster: Cluster | undefined;
  try {
    cluster = await startCluster({ args: kubednsArgs, seed: opts.seed, configFiles: { upstreamNameservers: JSON.stringify([`127.0.0.1:${upstream.port}`]) } });
    await waitSynced(cluster);
    // dnsmasq: the manifest's arguments after "--", kubedns's port instead of 10053; the
    // nanny's servers file (the upstream) becomes one --server. The test base arguments already
    // keep dnsmasq in the foreground and log to stderr (dnsmasq refuses those twice).
    const all = manifestArgs('dnsmasq');
    const passthrough = all
      .slice(all.indexOf('--') + 1)
      .filter((a) => a !== '-k' && a !== '--log-facility=-')
      .map((a) => a.replace(/#10053$/, `#${cluster!.server.port}`));
    const dnsmasq = await startDnsmasq([...passthrough, `--server=127.0.0.1#${upstream.port}`, ...(opts.extraDnsmasqArgs ?? [])], opts.dnsmasqListen ?? {});
    const c = cluster;
    const server = { host: dnsmasq.host, port: dnsmasq.port };
    let chaosAsked = 0;
    return {
      cluster: c,
      api: c.api,
      dnsmasq,
      upstream,
      ask: (name, type, more = {}) => query(server, { name, type, timeoutMs: 3000, ...more }),
      cacheHits: async () => {
        const r = await query(server, { name: 'hits.bind', type: 'TXT', class: 'CH', timeoutMs: 3000 });
        const data = (r.packet.answers?.[0] as { data?: Buffer[] } | undefined)?.data;
        const raw = Number(String(data?.[0]));
        if (!Number.isInteger(raw)) throw new Error(`dnsmasq's hits.bind is not a number: ${String(data?.[0])}`);
        return raw - chaosAsked++;
      },
      stop: async () => {
        await dnsmasq.stop();
        await c.stop();
        await upstream.close();
      },
    };
  } catch (e) {
    await cluster?.stop();
    await upstream.close();
    throw e;
  }
}
