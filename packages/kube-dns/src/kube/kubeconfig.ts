// Where kube-dns finds the API server, as the original (clientcmd.BuildConfigFromFlags):
//   --kubecfg-file          that kubeconfig (its current context)
//   --kube-master-url       that server, overriding the kubeconfig's (or alone: no credentials)
//   neither                 the pod's service account (KUBERNETES_SERVICE_HOST/PORT, token, CA)
import { isIP } from 'node:net';
import { accessSync, constants, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { KubeConfig, loadYaml, type Cluster, type User } from '@kubernetes/client-node';
import { RotatingTokenFile, rotatingTokenUsers, tokenFileUser } from './token-file.js';

export class KubeConfigError extends Error {
  override name = 'KubeConfigError';
}

export interface KubeConfigSource {
  kubecfgFile?: string;
  masterUrl?: string;
  /** Root prefixed to /var/run/secrets/kubernetes.io/serviceaccount (tests). Default ''. */
  inClusterRoot?: string;
  env?: NodeJS.ProcessEnv;
}

/** Go's os.ExpandEnv: $VAR and ${VAR}; unset variables become ''. */
export function expandEnv(s: string, env: NodeJS.ProcessEnv = process.env): string {
  return s.replace(/\$\{([^}]*)\}|\$([A-Za-z0-9_]+)/g, (_m, braced: string | undefined, bare: string | undefined) => env[braced ?? bare ?? ''] ?? '');
}

/**
 * Validates --kube-master-url after env expansion, as the original does (scheme and host
 * required). Unlike the original, which validates the expanded form but then uses the raw one,
 * we use the expanded URL: a `$VAR` in the flag would otherwise never work.
 */
export function parseMasterUrl(raw: string, env: NodeJS.ProcessEnv = process.env): string {
  const expanded = expandEnv(raw, env);
  let u: URL;
  try {
    u = new URL(expanded);
  } catch {
    throw new KubeConfigError(`invalid --kube-master-url ${JSON.stringify(raw)}: not a URL (expanded: ${JSON.stringify(expanded)}); want e.g. https://10.0.0.1:443`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') {
    throw new KubeConfigError(`invalid --kube-master-url ${JSON.stringify(raw)}: scheme must be http or https, got ${JSON.stringify(u.protocol.replace(/:$/, ''))}`);
  }
  if (u.hostname === '') {
    throw new KubeConfigError(`invalid --kube-master-url ${JSON.stringify(raw)}: no host`);
  }
  return expanded.replace(/\/+$/, '');
}

function withServer(kc: KubeConfig, server: string): KubeConfig {
  const current = kc.getCurrentCluster();
  const out = new KubeConfig();
  const cluster: Cluster = {
    ...(current ?? { name: 'kube-master-url' }),
    server,
    // Plain http has no TLS to verify; client-node refuses http:// unless this is set.
    skipTLSVerify: server.startsWith('http:') ? true : (current?.skipTLSVerify ?? false),
  };
  if (!current) {
    out.loadFromClusterAndUser(cluster, { name: 'kube-master-url' });
    return out;
  }
  out.addAuthenticator(new RotatingTokenFile());
  out.loadFromOptions({
    clusters: kc.getClusters().map((c) => (c.name === current.name ? cluster : c)),
    users: kc.getUsers(),
    contexts: kc.getContexts(),
    currentContext: kc.getCurrentContext(),
  });
  return out;
}

/**
 * The kubeconfig `file`, its users' `tokenFile` honoured: client-node 1.4 does not map that
 * field, so such a user would send no credentials at all. client-go reads it (a relative path
 * from the file's directory) and re-reads it as it rotates; RotatingTokenFile does both.
 */
function loadKubeconfigFile(file: string): KubeConfig {
  const text = readFileSync(file, 'utf8');
  const loaded = new KubeConfig();
  loaded.loadFromString(text);
  loaded.makePathsAbsolute(dirname(file));
  const raw = loadYaml<{ users?: unknown }>(text);
  const tokenFiles = new Map<string, string>();
  for (const entry of Array.isArray(raw.users) ? (raw.users as unknown[]) : []) {
    const e = entry as { name?: unknown; user?: { tokenFile?: unknown } } | null;
    const path = e?.user?.tokenFile;
    if (typeof e?.name === 'string' && typeof path === 'string' && path !== '') tokenFiles.set(e.name, resolve(dirname(file), path));
  }
  // an auth provider or exec plugin authenticates instead
  const byFile = (u: User | null): string | undefined => (u && !u.authProvider && !u.exec ? tokenFiles.get(u.name) : undefined);
  // as client-go: the current user's token file must be readable at start (unless it has a token too)
  const current = loaded.getCurrentUser();
  const currentFile = byFile(current);
  if (currentFile !== undefined && !current?.token) {
    try {
      accessSync(currentFile, constants.R_OK);
    } catch (e) {
      throw new Error(`user ${JSON.stringify(current?.name)}: cannot read its tokenFile: ${(e as Error).message}`);
    }
  }
  const kc = new KubeConfig();
  kc.addAuthenticator(new RotatingTokenFile());
  kc.loadFromOptions({
    clusters: loaded.getClusters(),
    users: loaded.getUsers().map((u) => {
      const path = byFile(u);
      return path === undefined ? u : tokenFileUser(u, path);
    }),
    contexts: loaded.getContexts(),
    currentContext: loaded.getCurrentContext(),
  });
  return kc;
}

function loadInCluster(root: string, env: NodeJS.ProcessEnv): KubeConfig {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) {
    throw new KubeConfigError(
      'no API server configured: neither --kubecfg-file nor --kube-master-url is set, and this is not a pod ' +
        '(KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are unset)',
    );
  }
  const token = `${root}/var/run/secrets/kubernetes.io/serviceaccount/token`;
  try {
    accessSync(token);
  } catch (e) {
    throw new KubeConfigError(`in-cluster config: cannot read the service account token ${token}: ${(e as Error).message}`);
  }
  // client-node reads KUBERNETES_SERVICE_* from process.env.
  const saved = { h: process.env['KUBERNETES_SERVICE_HOST'], p: process.env['KUBERNETES_SERVICE_PORT'] };
  process.env['KUBERNETES_SERVICE_HOST'] = host;
  process.env['KUBERNETES_SERVICE_PORT'] = port;
  try {
    const loaded = new KubeConfig();
    loaded.loadFromCluster(root);
    // the same config, its token read through RotatingTokenFile (see token-file.ts)
    const kc = new KubeConfig();
    kc.addAuthenticator(new RotatingTokenFile());
    kc.loadFromOptions({
      // https whatever the port, as client-go's InClusterConfig: client-node picks plain http for
      // ports 80, 8080 and 8001, and then refuses it without skipTLSVerify (every list failing)
      clusters: loaded.getClusters().map((c) => ({ ...c, server: `https://${isIP(host) === 6 ? `[${host}]` : host}:${port}` })),
      users: rotatingTokenUsers(loaded.getUsers()),
      contexts: loaded.getContexts(),
      currentContext: loaded.getCurrentContext(),
    });
    return kc;
  } finally {
    restoreEnv('KUBERNETES_SERVICE_HOST', saved.h);
    restoreEnv('KUBERNETES_SERVICE_PORT', saved.p);
  }
}

function restoreEnv(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

export function loadKubeConfig(src: KubeConfigSource = {}): KubeConfig {
  const env = src.env ?? process.env;
  const master = src.masterUrl ? parseMasterUrl(src.masterUrl, env) : undefined;
  if (src.kubecfgFile) {
    let kc: KubeConfig;
    try {
      kc = loadKubeconfigFile(src.kubecfgFile);
    } catch (e) {
      throw new KubeConfigError(`cannot load --kubecfg-file ${src.kubecfgFile}: ${(e as Error).message}`);
    }
    if (!master && !kc.getCurrentCluster()) {
      throw new KubeConfigError(
        `--kubecfg-file ${src.kubecfgFile}: no cluster for the current context ${JSON.stringify(kc.getCurrentContext() ?? '')}`,
      );
    }
    // a plain http server of the file's own is taken as client-go takes it: http, no TLS to verify
    // (client-node refuses http:// unless TLS verification is explicitly off)
    const own = kc.getCurrentCluster()?.server ?? '';
    return master ? withServer(kc, master) : own.startsWith('http:') ? withServer(kc, own) : kc;
  }
  if (master) return withServer(new KubeConfig(), master);
  return loadInCluster(src.inClusterRoot ?? '', env);
}

