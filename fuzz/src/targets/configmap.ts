// The ConfigMap parser (kube-dns and the nanny both run it on every change of the mounted keys).
// The input is split at NUL bytes into the four keys, in order; a missing part is an absent key.
import { CONFIG_KEYS, MAX_UPSTREAMS, describeErrors, parseConfig } from '@kube-dns/config';
import { check, type FuzzTarget } from '../target.js';

const SEEDS = [
  ['{"acme.local": ["1.2.3.4"], "corp.example": ["10.0.0.10:5353", "[fd00::53]:53"]}', '["8.8.8.8", "8.8.4.4"]', '{"fed": "fed.example.com"}', '10.1.2.3 db.example\n# comment\n::1 v6.example alias\n'],
  ['{"stub.cluster.local": ["kube-dns.kube-system.svc.cluster.local"]}', '', '', ''],
  ['', '["1.1.1.1:53"]'],
  ['null', 'null', 'null', ''],
  ['{"a": []}', '["1.2.3.4", "1.2.3.5", "1.2.3.6", "1.2.3.7"]'],
];

export function configmapTarget(): FuzzTarget {
  return {
    name: 'configmap',
    covers: (url) => url.includes('/packages/config/dist/src/'),
    seeds: () => SEEDS.map((parts) => Buffer.from(parts.join('\0'))),
    dictionary: ['{', '}', '[', ']', '"', ':', ',', '\0', 'null', '"acme.local"', '"1.2.3.4"', '"1.2.3.4:53"', '"[::1]:53"', '"::1"', '"ns.cluster.local"', '"a..b"', '"-x"', '99999', '#', '\n', ' ', '127.0.0.1 h'].map((s) =>
      Buffer.from(s),
    ),
    run(input) {
      const parts = input.toString('utf8').split('\0');
      const data: Record<string, string> = {};
      CONFIG_KEYS.forEach((k, i) => {
        if (parts[i] !== undefined) data[k] = parts[i]!;
      });
      const r = parseConfig(data, 'v');
      if (!r.ok) {
        check(r.errors.length > 0, 'rejected without a reason');
        for (const e of r.errors) check(typeof e.reason === 'string' && e.reason.length > 0 && (CONFIG_KEYS as readonly string[]).includes(e.key), `a bad error: ${JSON.stringify(e)}`);
        check(describeErrors(r.errors).length > 0, 'empty error description');
        return;
      }
      const c = r.config;
      check(c.upstreamNameservers.length <= MAX_UPSTREAMS, `${c.upstreamNameservers.length} upstreams accepted (max ${MAX_UPSTREAMS})`);
      for (const ns of c.upstreamNameservers) check(Number.isInteger(ns.port) && ns.port > 0 && ns.port < 65536, `bad port accepted: ${JSON.stringify(ns)}`);
      for (const [domain, servers] of c.stubDomains) {
        check(domain === domain.toLowerCase() && !domain.endsWith('.'), `stub domain not normalised: ${JSON.stringify(domain)}`);
        for (const s of servers) check(s.port > 0 && s.port < 65536, `bad stub server port: ${JSON.stringify(s)}`);
      }
    },
  };
}
