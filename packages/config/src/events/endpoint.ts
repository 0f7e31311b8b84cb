// Where Events go, for a binary without a Kubernetes client (the nanny): the pod's service
// account (in a cluster), or a kubeconfig file (tests, the demo, running outside a cluster).
// And which pod we are: the downward API's environment (manifests/kube-dns.yaml sets it).
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { RequestOptions } from 'node:https';
import type { ApiEndpoint, ObjectReference } from './recorder.js';

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** Bound service-account tokens are rotated by the kubelet; re-read this often. */
const TOKEN_REFRESH_MS = 60_000;

/** A file re-read at most every `ms`; the last good content if a read fails. */
function cachedFile(path: string, ms: number): () => string {
  let at = 0;
  let value = '';
  return () => {
    if (Date.now() - at > ms || !value) {
      try {
        value = readFileSync(path, 'utf8').trim();
        at = Date.now();
      } catch (e) {
        if (!value) throw e;
      }
    }
    return value;
  };
}

/** The pod's service account, as client-go's InClusterConfig; undefined outside a pod. */
export function inClusterEndpoint(env: NodeJS.ProcessEnv = process.env, root = ''): ApiEndpoint | undefined {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  if (!host || !port) return undefined;
  const token = cachedFile(`${root}${SA_DIR}/token`, TOKEN_REFRESH_MS);
  let ca: string | undefined;
  return {
    server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    options: () => {
      ca ??= readFileSync(`${root}${SA_DIR}/ca.crt`, 'utf8');
      return { ca, headers: { Authorization: `Bearer ${token()}` } };
    },
  };
}

type Named<T> = { name: string } & T;
interface KubeconfigDoc {
  'current-context'?: string;
  contexts?: Named<{ context?: { cluster?: string; user?: string } }>[];
  clusters?: Named<{ cluster?: { server?: string; 'certificate-authority'?: string; 'certificate-authority-data'?: string; 'insecure-skip-tls-verify'?: boolean } }>[];
  users?: Named<{ user?: { token?: string; tokenFile?: string; 'client-certificate'?: string; 'client-certificate-data'?: string; 'client-key'?: string; 'client-key-data'?: string } }>[];
}

/**
 * The current context of a kubeconfig file: server, CA, and a token or client certificate.
 * Exec plugins and auth providers are not supported (the nanny only needs this outside a pod).
 */
export async function kubeconfigEndpoint(path: string): Promise<ApiEndpoint> {
  // js-yaml only when a kubeconfig is given: in a pod the nanny never loads it.
  const { load } = await import('js-yaml');
  const doc = load(await readFile(path, 'utf8')) as KubeconfigDoc;
  const ctxName = doc['current-context'];
  const ctx = doc.contexts?.find((c) => c.name === ctxName)?.context;
  const cluster = doc.clusters?.find((c) => c.name === ctx?.cluster)?.cluster;
  const user = doc.users?.find((u) => u.name === ctx?.user)?.user ?? {};
  if (!cluster?.server) throw new Error(`${path}: no cluster server for the current context ${JSON.stringify(ctxName ?? '')}`);
  const rel = (p: string) => resolve(dirname(path), p);
  const data = (inline: string | undefined, file: string | undefined) =>
    inline ? Buffer.from(inline, 'base64') : file ? readFileSync(rel(file)) : undefined;
  const ca = data(cluster['certificate-authority-data'], cluster['certificate-authority']);
  const cert = data(user['client-certificate-data'], user['client-certificate']);
  const key = data(user['client-key-data'], user['client-key']);
  const tokenFile = user.tokenFile ? cachedFile(rel(user.tokenFile), TOKEN_REFRESH_MS) : undefined;
  return {
    server: cluster.server.replace(/\/+$/, ''),
    options: (): RequestOptions => {
      const token = user.token ?? tokenFile?.();
      return {
        ...(ca && { ca }),
        ...(cert && { cert }),
        ...(key && { key }),
        ...(cluster['insecure-skip-tls-verify'] && { rejectUnauthorized: false }),
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      };
    },
  };
}

/** This pod, from the downward API (POD_NAME, POD_NAMESPACE, POD_UID, NODE_NAME). */
export interface PodIdentity {
  name?: string;
  namespace: string;
  uid?: string;
  node?: string;
}

export function podIdentity(env: NodeJS.ProcessEnv = process.env): PodIdentity {
  const v = (k: string) => env[k] || undefined;
  return { name: v('POD_NAME'), namespace: v('POD_NAMESPACE') ?? 'kube-system', uid: v('POD_UID'), node: v('NODE_NAME') };
}

/** A container of this pod, as the involved object of an Event; undefined without POD_NAME. */
export function podReference(pod: PodIdentity, container?: string): ObjectReference | undefined {
  if (!pod.name) return undefined;
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    namespace: pod.namespace,
    name: pod.name,
    ...(pod.uid && { uid: pod.uid }),
    ...(container && { fieldPath: `spec.containers{${container}}` }),
  };
}

/** The kube-dns ConfigMap in this pod's namespace. */
export function configMapReference(pod: PodIdentity, name = 'kube-dns'): ObjectReference {
  return { kind: 'ConfigMap', apiVersion: 'v1', namespace: pod.namespace, name };
}
