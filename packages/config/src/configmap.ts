// The kube-dns ConfigMap: keys, parsing and validation. Pure: data in, config or errors out.
import { isIP } from 'node:net';
import { isDns1123Label, isDns1123Subdomain, isHostName } from './dns1123.js';
import { parseTransferTo } from './transfer-to.js';
import { type Nameserver, ZONE_INDEX_ERROR, ipFamily, parseIpNameserver, parsePort, splitHostPort } from './nameserver.js';

/** The keys parseConfig reads; any other key is reported as ignored (dir-source.ts). */
export const CONFIG_KEYS: readonly string[] = ['stubDomains', 'upstreamNameservers', 'federations', 'hosts', 'ignoreEmptyService', 'transferTo'];
export const MAX_UPSTREAMS = 3;

export interface HostsEntry {
  ip: string;
  names: string[];
  /** 1-based line in the `hosts` key, for messages. */
  line: number;
}

export interface KubeDnsConfig {
  /** Lower-case domain without trailing dot → its servers, in the order given. */
  stubDomains: Map<string, Nameserver[]>;
  upstreamNameservers: Nameserver[];
  /** Obsolete: accepted and validated for compatibility, otherwise ignored. */
  federations: Map<string, string>;
  hosts: HostsEntry[];
  /**
   * kube-dns zone options an operator may change live (keys `ignoreEmptyService`, `transferTo`);
   * a key present overrides the flag of the same name, an absent key leaves the flag in force.
   */
  zoneOverrides: { ignoreEmptyService?: boolean; transferTo?: string };
  /** A hash of the source files (readConfigDir); "" for the defaults. */
  version: string;
}

export interface ConfigError {
  key: string;
  reason: string;
}

export type ConfigResult = { ok: true; config: KubeDnsConfig } | { ok: false; errors: ConfigError[] };

export function defaultConfig(): KubeDnsConfig {
  return { stubDomains: new Map(), upstreamNameservers: [], federations: new Map(), hosts: [], zoneOverrides: {}, version: '' };
}

/** Parses and validates every known key; any error rejects the whole update, as the original does. */
export function parseConfig(data: Readonly<Record<string, string>>, version = ''): ConfigResult {
  const config = defaultConfig();
  config.version = version;
  const errors: ConfigError[] = [];
  const collect = (key: string, reasons: string[]) => reasons.forEach((reason) => errors.push({ key, reason }));

  if (data.stubDomains !== undefined) {
    const r = parseStubDomains(data.stubDomains);
    if (r.ok) config.stubDomains = r.value;
    else collect('stubDomains', r.errors);
  }
  if (data.upstreamNameservers !== undefined) {
    const r = parseUpstreamNameservers(data.upstreamNameservers);
    if (r.ok) config.upstreamNameservers = r.value;
    else collect('upstreamNameservers', r.errors);
  }
  if (data.federations !== undefined) {
    const r = parseFederations(data.federations);
    if (r.ok) config.federations = r.value;
    else collect('federations', r.errors);
  }
  if (data.hosts !== undefined) {
    const r = parseHosts(data.hosts);
    if (r.ok) config.hosts = r.value;
    else collect('hosts', r.errors);
  }
  if (data.ignoreEmptyService !== undefined) {
    const v = data.ignoreEmptyService.trim().toLowerCase();
    if (v === 'true' || v === 'false') config.zoneOverrides.ignoreEmptyService = v === 'true';
    else collect('ignoreEmptyService', [`must be true or false, not ${JSON.stringify(data.ignoreEmptyService)}`]);
  }
  if (data.transferTo !== undefined) {
    try {
      parseTransferTo(data.transferTo);
      config.zoneOverrides.transferTo = data.transferTo.trim();
    } catch (e) {
      collect('transferTo', [(e as Error).message]);
    }
  }
  return errors.length ? { ok: false, errors } : { ok: true, config };
}

type Multi<T> = { ok: true; value: T } | { ok: false; errors: string[] };

function parseJson(raw: string): { ok: true; value: unknown } | { ok: false; errors: string[] } {
  // A byte-order mark (a file saved by a Windows editor) is not JSON; RFC 8259 lets a parser
  // ignore it, and the other keys' trim() already does.
  const text = raw.startsWith('\uFEFF') ? raw.slice(1) : raw;
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    // Go's json.Unmarshal of `null` into a map or slice leaves it empty, without an error.
    return { ok: true, value: JSON.parse(text) ?? undefined };
  } catch (e) {
    return { ok: false, errors: [`invalid JSON: ${jsonErrorText(text, (e as Error).message)}`] };
  }
}

/**
 * V8's message on one line: it quotes the text raw (a newline there broke the log line and the
 * Event), and "at position 58" is told as a line and column, which is what an editor shows.
 */
function jsonErrorText(text: string, message: string): string {
  const oneLine = message.replace(/[\u0000-\u001f\u007f\ufeff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const pos = /at position (\d+)/.exec(message);
  if (!pos) return oneLine;
  const before = text.slice(0, Number(pos[1])).split('\n');
  return `${oneLine} (line ${before.length}, column ${before[before.length - 1]!.length + 1})`;
}

/**
 * A stub domain server: an IP, `IP:port`, `[IPv6]:port`, or a host name (resolved by whoever
 * uses it). The original accepts a name only without a port; we also take `name:port`.
 */
export function parseStubServer(raw: string): { ok: true; value: Nameserver } | { ok: false; error: string } {
  const s = raw.trim();
  const ip = parseIpNameserver(s);
  if (ip.ok || s.includes('%')) return ip;
  const hp = splitHostPort(s);
  const host = hp ? hp.host : s;
  let port = 53;
  if (hp) {
    const p = parsePort(hp.port);
    if (!p.ok) return { ok: false, error: `${p.error} in ${JSON.stringify(raw)}` };
    port = p.value;
  }
  if (isIP(host) !== 0) return { ok: true, value: { host, port, family: isIP(host) as 4 | 6, raw } };
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  if (!isDns1123Subdomain(name.toLowerCase())) {
    return { ok: false, error: `${JSON.stringify(raw)} is neither an IP address nor a valid host name` };
  }
  // a mistyped address (`10.0.53`, `010.001.002.003`, `0x0a000035`) is a valid host name, but the
  // system resolver reads it as inet_aton does (a short form, octal, hex): another address, silently
  if (INET_ATON_FORM.test(name)) return { ok: false, error: `${JSON.stringify(raw)} is not a valid IP address (write the four decimal octets: a resolver would read this form as another address)` };
  return { ok: true, value: { host: name.toLowerCase(), port, family: 0, raw } };
}

/** What inet_aton takes for an IPv4 address: 1 to 4 parts, each decimal, octal (0...) or hex (0x...). */
const INET_ATON_FORM = /^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}$/i;

export function parseStubDomains(text: string): Multi<Map<string, Nameserver[]>> {
  const j = parseJson(text);
  if (!j.ok) return j;
  const out = new Map<string, Nameserver[]>();
  if (j.value === undefined) return { ok: true, value: out };
  if (typeof j.value !== 'object' || j.value === null || Array.isArray(j.value)) {
    return { ok: false, errors: ['must be a JSON object of domain → list of servers'] };
  }
  const errors: string[] = [];
  /** The spelling each domain was first written in: two spellings of one domain must not overwrite each other. */
  const spelled = new Map<string, string>();
  for (const [domainRaw, servers] of Object.entries(j.value as Record<string, unknown>)) {
    const domain = domainRaw.endsWith('.') ? domainRaw.slice(0, -1) : domainRaw;
    if (!isDns1123Subdomain(domain.toLowerCase())) {
      errors.push(`domain ${JSON.stringify(domainRaw)} is not a valid DNS-1123 subdomain`);
      continue;
    }
    const first = spelled.get(domain.toLowerCase());
    if (first !== undefined) {
      errors.push(`domains ${JSON.stringify(first)} and ${JSON.stringify(domainRaw)} are the same domain: list its servers under one key`);
      continue;
    }
    spelled.set(domain.toLowerCase(), domainRaw);
    // The original accepts an empty (or null) list and then configures nothing for the domain; so do we.
    if (servers === null || (Array.isArray(servers) && servers.length === 0)) continue;
    if (!Array.isArray(servers) || !servers.every((s) => typeof s === 'string')) {
      errors.push(`domain ${JSON.stringify(domainRaw)}: ${notAString(servers)}servers must be a list of strings`);
      continue;
    }
    const list: Nameserver[] = [];
    for (const s of servers as string[]) {
      const r = parseStubServer(s);
      if (r.ok) list.push(r.value);
      else errors.push(`domain ${JSON.stringify(domainRaw)}: ${r.error}`);
    }
    out.set(domain.toLowerCase(), list);
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: out };
}

/** The first entry of a list that is not a string, as the start of a reason ("" for no list). */
function notAString(list: unknown): string {
  if (!Array.isArray(list)) return '';
  return `${JSON.stringify(list.find((s) => typeof s !== 'string'))} is not a string: `;
}

export function parseUpstreamNameservers(text: string): Multi<Nameserver[]> {
  const j = parseJson(text);
  if (!j.ok) return j;
  if (j.value === undefined) return { ok: true, value: [] };
  if (!Array.isArray(j.value) || !j.value.every((s) => typeof s === 'string')) {
    return { ok: false, errors: [`${notAString(j.value)}must be a JSON list of "IP" or "IP:port" strings`] };
  }
  const errors: string[] = [];
  if (j.value.length > MAX_UPSTREAMS) {
    errors.push(`${j.value.length} servers given, at most ${MAX_UPSTREAMS} are allowed`);
  }
  const out: Nameserver[] = [];
  for (const s of j.value as string[]) {
    const r = parseIpNameserver(s);
    if (r.ok) out.push(r.value);
    else errors.push(r.error);
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: out };
}

/** `name=domain[,name2=domain2]`, the original's flag format (not JSON). */
export function parseFederations(text: string): Multi<Map<string, string>> {
  const out = new Map<string, string>();
  const errors: string[] = [];
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, value: out };
  for (const item of trimmed.split(',')) {
    const kv = item.trim();
    const eq = kv.indexOf('=');
    if (eq < 0) {
      errors.push(`${JSON.stringify(kv)} is not name=domain`);
      continue;
    }
    const name = kv.slice(0, eq).trim();
    const domain = kv.slice(eq + 1).trim();
    if (!isDns1123Label(name)) errors.push(`federation name ${JSON.stringify(name)} is not a valid DNS-1123 label`);
    else if (!isDns1123Subdomain(domain)) errors.push(`federation domain ${JSON.stringify(domain)} is not a valid DNS-1123 subdomain`);
    else out.set(name, domain);
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: out };
}

/** hosts-file lines: `IP name [name...]`, `#` starts a comment. */
export function parseHosts(text: string): Multi<HostsEntry[]> {
  const out: HostsEntry[] = [];
  const errors: string[] = [];
  text.split(/\r?\n/).forEach((rawLine, i) => {
    const line = rawLine.replace(/#.*/, '').trim();
    if (line === '') return;
    const [ip, ...names] = line.split(/\s+/);
    if (!ip || ipFamily(ip) === 0) {
      errors.push(`line ${i + 1}: ${JSON.stringify(ip ?? '')} is not an IP address${ip?.includes('%') ? ` (${ZONE_INDEX_ERROR})` : ''}`);
      return;
    }
    if (names.length === 0) {
      errors.push(`line ${i + 1}: no host name after ${ip}`);
      return;
    }
    const bad = names.filter((n) => !isHostName(n));
    if (bad.length) {
      errors.push(`line ${i + 1}: ${bad.map((b) => JSON.stringify(b)).join(', ')} not a valid host name`);
      return;
    }
    out.push({ ip, names, line: i + 1 });
  });
  return errors.length ? { ok: false, errors } : { ok: true, value: out };
}

/** At most this many errors are told (a 40,000-line hosts value made one 5.6 MB log line). */
export const ERRORS_TOLD = 20;

/** One line per error, naming the key: what operators read in the log. */
export function describeErrors(errors: ConfigError[]): string {
  const told = errors.slice(0, ERRORS_TOLD).map((e) => `${e.key}: ${e.reason}`);
  if (errors.length > ERRORS_TOLD) told.push(`and ${errors.length - ERRORS_TOLD} more`);
  return told.join('; ');
}
