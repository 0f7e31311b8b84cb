// The ConfigMap's `hosts` key: parsed by the config package, written by the nanny as the hosts
// file dnsmasq reads. Whatever is accepted must survive that round trip unchanged.
import { isIP } from 'node:net';
import { parseHosts } from '@kube-dns/config';
import { hostsFileText } from '../../../packages/dnsmasq-nanny/dist/src/hosts-file.js';
import { check, type FuzzTarget } from '../target.js';

export function hostsTarget(): FuzzTarget {
  return {
    name: 'hosts',
    covers: (url) => url.includes('/packages/config/dist/src/') || url.includes('/packages/dnsmasq-nanny/dist/src/'),
    seeds: () =>
      ['10.1.2.3 db.example\n', '# only a comment\n', '::1 v6.example alias # trailing\n\n192.0.2.1\tx y z\r\n', 'fe80::1%eth0 link.local\n', '300.1.1.1 bad\n'].map((s) => Buffer.from(s)),
    dictionary: ['\n', '\r\n', ' ', '\t', '#', '127.0.0.1', '::1', '::ffff:1.2.3.4', 'fe80::1%eth0', 'host', 'a.b.c', '-bad', 'x'.repeat(64), '.', '_srv', '*'].map((s) => Buffer.from(s)),
    run(input) {
      const r = parseHosts(input.toString('utf8'));
      if (!r.ok) {
        check(r.errors.length > 0 && r.errors.every((e) => /^line \d+: /.test(e)), `errors without a line number: ${JSON.stringify(r.errors)}`);
        return;
      }
      for (const e of r.value) check(isIP(e.ip) !== 0 && e.names.length > 0, `bad entry accepted: ${JSON.stringify(e)}`);
      const text = hostsFileText(r.value);
      const again = parseHosts(text);
      check(again.ok, `the hosts file we write is not accepted back: ${JSON.stringify(text)}`);
      const strip = (es: typeof r.value) => es.map((e) => [e.ip, e.names]);
      check(JSON.stringify(strip(again.value)) === JSON.stringify(strip(r.value)), `round trip changed the entries:\n  ${JSON.stringify(strip(r.value))}\n  ${JSON.stringify(strip(again.value))}`);
    },
  };
}
