// The version printed by --version: KUBE_DNS_VERSION when an image build sets one (as kube-dns
// does), else the package's own.
import { readFileSync } from 'node:fs';

export function sidecarVersion(): string {
  if (process.env.KUBE_DNS_VERSION) return process.env.KUBE_DNS_VERSION;
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? 'UNKNOWN';
  } catch {
    return 'UNKNOWN';
  }
}
