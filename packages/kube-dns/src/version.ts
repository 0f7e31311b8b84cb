import { readFileSync } from 'node:fs';

/** The package version, or KUBE_DNS_VERSION when an image build sets one. */
export const VERSION: string =
  process.env.KUBE_DNS_VERSION || (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
