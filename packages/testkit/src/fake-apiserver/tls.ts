// A throwaway self-signed certificate for 127.0.0.1 (openssl CLI), so the fake server can speak
// HTTPS and clients verify it against a real CA, as in a cluster.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface SelfSigned {
  certPem: string;
  keyPem: string;
}

export async function selfSignedCert(dir: string): Promise<SelfSigned> {
  const cert = join(dir, 'tls.crt');
  const key = join(dir, 'tls.key');
  try {
    await promisify(execFile)('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
      '-subj', '/CN=fake-kube-apiserver', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout', key, '-out', cert,
    ]);
  } catch (e) {
    throw new Error(`fake-apiserver: cannot create a TLS certificate with openssl (install openssl or use tls: false): ${String(e)}`);
  }
  return { certPem: await readFile(cert, 'utf8'), keyPem: await readFile(key, 'utf8') };
}
