// The --probe value: `<label>,<server>,<dns name>[,<interval seconds>][,<type>]`, parsed and
// validated as the original's probeOptions.Set, with the original's error wording so that
// operators searching for a message find the same one.
import { isIP } from 'node:net';
import { parsePort, splitHostPort } from '@kube-dns/config';
import { nameProblem } from '@kube-dns/dns-client';

export const PROBE_TYPES = ['ANY', 'A', 'AAAA', 'SRV'] as const;
export type ProbeType = (typeof PROBE_TYPES)[number];

export interface ProbeSpec {
  label: string;
  /** Where the probe is sent; host is an IP literal (no brackets) or a host name. */
  server: { host: string; port: number };
  /** The server as the original stores it (`:53` appended when there was no port). */
  serverText: string;
  /** Fully qualified: always ends in '.'. */
  name: string;
  /** Whole seconds from the flag; tests may use less through the programmatic API. */
  intervalMs: number;
  type: ProbeType;
}

export const LABEL_PATTERN = /^[a-zA-Z0-9_]+$/;
const DEFAULT_INTERVAL_S = 5;

export type ProbeSpecResult = { ok: true; value: ProbeSpec } | { ok: false; error: string };

export function parseProbeSpec(value: string): ProbeSpecResult {
  const fields = value.split(',');
  if (fields.length < 3 || fields.length > 5) {
    return { ok: false, error: `invalid format to --probe: ${value} (want <label>,<server>,<dns name>[,<interval seconds>][,<type>])` };
  }
  const [label, serverField, nameField, intervalField, typeField] = fields as [string, string, string, string?, string?];
  if (!LABEL_PATTERN.test(label)) return { ok: false, error: `label must be of format ${LABEL_PATTERN.source}, got ${JSON.stringify(label)}` };

  const server = parseProbeServer(serverField);
  if (!server.ok) return server;

  const name = nameField.endsWith('.') ? nameField : `${nameField}.`;
  // a typo such as two trailing dots would go out as a malformed question, and the probe would
  // report the server as failing rather than the flag as wrong
  const bad = nameProblem(name);
  if (bad) return { ok: false, error: `dns name of probe ${label}: ${bad}` };

  let intervalS = DEFAULT_INTERVAL_S;
  if (intervalField !== undefined) {
    // strconv.Atoi: optional sign and decimal digits only ("0.5" and "" are syntax errors).
    if (!/^[+-]?[0-9]+$/.test(intervalField)) {
      return { ok: false, error: `interval ${JSON.stringify(intervalField)} of probe ${label}: invalid syntax (want whole seconds)` };
    }
    intervalS = Number(intervalField);
    // The original accepted 0 and negative values and then probed in a tight loop.
    if (intervalS < 1) return { ok: false, error: `interval ${JSON.stringify(intervalField)} of probe ${label}: must be at least 1 second` };
  }

  let type: ProbeType = 'ANY';
  if (typeField !== undefined) {
    if (!(PROBE_TYPES as readonly string[]).includes(typeField)) {
      return { ok: false, error: `invalid type for DNS: ${typeField} (want one of ${PROBE_TYPES.join(', ')})` };
    }
    type = typeField as ProbeType;
  }
  return { ok: true, value: { label, server: server.value.server, serverText: server.value.text, name, intervalMs: intervalS * 1000, type } };
}

function parseProbeServer(raw: string): { ok: true; value: { server: { host: string; port: number }; text: string } } | { ok: false; error: string } {
  if (raw === '') return { ok: false, error: 'empty server in --probe' };
  // A bare IPv6 address: the original appended nothing and then failed at every probe; take port 53.
  if (isIP(raw) === 6) return { ok: true, value: { server: { host: raw, port: 53 }, text: `[${raw}]:53` } };
  const text = raw.includes(':') ? raw : `${raw}:53`;
  const hp = splitHostPort(text);
  if (!hp || hp.host === '') return { ok: false, error: `server ${JSON.stringify(raw)} in --probe is not host, host:port or [IPv6]:port` };
  const port = parsePort(hp.port);
  if (!port.ok) return { ok: false, error: `server ${JSON.stringify(raw)} in --probe: ${port.error}` };
  return { ok: true, value: { server: { host: hp.host, port: port.value }, text } };
}
