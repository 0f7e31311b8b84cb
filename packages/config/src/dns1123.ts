// DNS-1123 name rules, as Kubernetes' apimachinery validation applies them.

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A DNS-1123 label: lower-case alphanumerics and '-', at most 63 characters. */
export function isDns1123Label(s: string): boolean {
  return s.length > 0 && s.length <= 63 && LABEL.test(s);
}

/** A DNS-1123 subdomain: dot-separated labels, at most 253 characters. */
export function isDns1123Subdomain(s: string): boolean {
  if (s.length === 0 || s.length > 253) return false;
  return s.split('.').every(isDns1123Label);
}

/**
 * A host name as found in hosts files and the --domain flag: like a subdomain, but upper case
 * is accepted (DNS is case-insensitive) and a single trailing dot is allowed.
 */
export function isHostName(s: string): boolean {
  const name = s.endsWith('.') ? s.slice(0, -1) : s;
  return isDns1123Subdomain(name.toLowerCase());
}
