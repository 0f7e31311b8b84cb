// A kubeconfig pointing at the fake server, in the format kubectl and client libraries read.
import { Buffer } from 'node:buffer';

export function kubeconfigYaml(opts: { server: string; token: string; caPem?: string }): string {
  // JSON is valid YAML; every kubeconfig loader (client-go, client-node's js-yaml) reads it.
  const cluster: Record<string, unknown> = { server: opts.server };
  if (opts.caPem) cluster['certificate-authority-data'] = Buffer.from(opts.caPem).toString('base64');
  // client-node refuses http:// servers unless TLS verification is explicitly off.
  else cluster['insecure-skip-tls-verify'] = true;
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'fake', cluster }],
      users: [{ name: 'fake', user: { token: opts.token } }],
      contexts: [{ name: 'fake', context: { cluster: 'fake', user: 'fake', namespace: 'default' } }],
      'current-context': 'fake',
    },
    null,
    2,
  );
}
