// The version printed by --version: KUBE_DNS_VERSION when an image build sets one (as kube-dns
// and the sidecar do), else the package's own. The original nanny had no --version; the images
// answer it in all three containers.
import { readFileSync } from 'node:fs';

export function nannyVersion(): string {
  if (process.env.KUBE_DNS_VERSION) return process.env.KUBE_DNS_VERSION;
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'UNKNOWN';
  } catch {
    return 'UNKNOWN';
  }
}
