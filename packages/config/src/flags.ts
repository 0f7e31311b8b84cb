// Command-line flags that accept both spellings operators have in their manifests: Go's
// `-flag=value` / `-flag value` (the nanny) and pflag's `--flag=value` (kube-dns, sidecar),
// with `_` and `-` interchangeable (pflag's WordSepNormalizeFunc) and Go booleans.

export type FlagType = 'string' | 'bool' | 'int' | 'duration' | 'strings' | 'optional';

export interface FlagSpec {
  type: FlagType;
  help: string;
  /** Default value: string for string/optional, boolean, number (ms for durations), string[]. */
  default?: string | boolean | number | string[];
  /** Not listed in --help (deprecated or compatibility-only flags). */
  hidden?: boolean;
  /** Returns an error message for a bad value. */
  validate?: (value: never) => string | undefined;
}

export type FlagSpecs = Record<string, FlagSpec>;

export type FlagValue = string | boolean | number | string[];

export interface ParsedFlags {
  values: Record<string, FlagValue>;
  /** Names the user set explicitly. */
  set: Set<string>;
  /** Everything after the first literal `--`. */
  passthrough: string[];
  positional: string[];
  help: boolean;
}

export class FlagError extends Error {
  override name = 'FlagError';
}

/** klog's flags: accepted everywhere (manifests pass -logtostderr, --alsologtostderr...), ignored. */
export const KLOG_COMPAT_FLAGS: FlagSpecs = Object.fromEntries(
  [
    ['logtostderr', 'bool'],
    ['alsologtostderr', 'bool'],
    ['log-dir', 'string'],
    ['log-file', 'string'],
    ['log-file-max-size', 'int'],
    ['skip-headers', 'bool'],
    ['skip-log-headers', 'bool'],
    ['one-output', 'bool'],
    ['stderrthreshold', 'string'],
    ['add-dir-header', 'bool'],
    ['log-backtrace-at', 'string'],
    ['vmodule', 'string'],
    ['log-flush-frequency', 'duration'],
  ].map(([name, type]) => [name, { type: type as FlagType, help: 'accepted for compatibility with klog; ignored', hidden: true }]),
);

const normalize = (name: string) => name.replace(/_/g, '-');

const GO_TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const GO_FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * The longest delay a Node timer takes (2^31 - 1 ms, 24.8 days): a longer one fires after 1 ms,
 * so a period of 1000h would poll every millisecond. Durations are capped to it: as a period or
 * a timeout, 24.8 days is as good as never.
 */
export const MAX_TIMER_MS = 2_147_483_647;

/** Go's time.ParseDuration, in milliseconds, capped at MAX_TIMER_MS. */
export function parseDuration(text: string): number {
  if (text === '0') return 0;
  const re = /([0-9]*\.?[0-9]+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  if (!/^([0-9]*\.?[0-9]+(ns|us|µs|ms|s|m|h))+$/.test(text)) {
    throw new FlagError(`invalid duration ${JSON.stringify(text)} (use a unit: 500ms, 10s, 1m)`);
  }
  while (pos < text.length) {
    re.lastIndex = pos;
    const m = re.exec(text)!;
    total += Number(m[1]) * UNIT_MS[m[2]!]!;
    pos = re.lastIndex;
  }
  return Math.min(total, MAX_TIMER_MS);
}

/** Go's time.Duration.String of a duration in milliseconds (10000 -> "10s", 90000 -> "1m30s"). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  return `${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}

export function parseFlags(argv: readonly string[], specs: FlagSpecs): ParsedFlags {
  const byName = new Map<string, [string, FlagSpec]>();
  for (const [name, spec] of Object.entries(specs)) byName.set(normalize(name), [name, spec]);
  const values: Record<string, FlagValue> = {};
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.default !== undefined) values[name] = Array.isArray(spec.default) ? [...spec.default] : spec.default;
    else if (spec.type === 'strings') values[name] = [];
    else if (spec.type === 'bool') values[name] = false;
  }
  const out: ParsedFlags = { values, set: new Set(), passthrough: [], positional: [], help: false };

  // the previous argument when it was a boolean (or optional-value) flag without "="
  let bareSwitch: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const afterSwitch = bareSwitch;
    bareSwitch = undefined;
    if (arg === '--') {
      out.passthrough = argv.slice(i + 1);
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      // `-restartDnsmasq false`: Go and pflag take the flag alone (true) and `false` as a stray
      // argument; what the operator meant is clear, so say how to write it.
      if (afterSwitch !== undefined) {
        throw new FlagError(`${afterSwitch} ${arg}: this flag takes its value only after "=" (${afterSwitch}=${arg}); alone it means true`);
      }
      out.positional.push(arg);
      continue;
    }
    const body = arg.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const rawName = eq < 0 ? body : body.slice(0, eq);
    let value: string | undefined = eq < 0 ? undefined : body.slice(eq + 1);
    if (['h', 'help'].includes(rawName) && !byName.has(rawName)) {
      out.help = true;
      continue;
    }
    let found = byName.get(normalize(rawName));
    // pflag's shorthand with its value attached: -v2 is -v=2 (the only one-letter flags are such)
    const short = !found && !arg.startsWith('--') ? byName.get(body[0]!) : undefined;
    if (short && short[1].type !== 'bool') [found, value] = [short, body.slice(1)];
    if (!found) throw new FlagError(`unknown flag: ${arg.split('=')[0]}`);
    const [name, spec] = found;
    if ((spec.type === 'bool' || spec.type === 'optional') && value === undefined) bareSwitch = arg;
    if (spec.type === 'bool') {
      if (value === undefined) value = 'true';
      if (GO_TRUE.has(value)) values[name] = true;
      else if (GO_FALSE.has(value)) values[name] = false;
      else throw new FlagError(`invalid boolean value ${JSON.stringify(value)} for -${rawName}`);
    } else if (spec.type === 'optional') {
      values[name] = value ?? 'true';
    } else {
      if (value === undefined) {
        if (i + 1 >= argv.length) throw new FlagError(`flag needs an argument: ${arg}`);
        value = argv[++i]!;
      }
      // pflag: the first explicit value of a list flag replaces its default instead of adding to it.
      values[name] = convert(name, spec, value, out.set.has(name) ? values[name] : undefined);
    }
    if (spec.validate) {
      const problem = spec.validate(values[name] as never);
      if (problem) throw new FlagError(`invalid value ${JSON.stringify(value)} for --${name}: ${problem}`);
    }
    out.set.add(name);
  }
  return out;
}

function convert(name: string, spec: FlagSpec, value: string, previous: FlagValue | undefined): FlagValue {
  switch (spec.type) {
    case 'string':
      return value;
    case 'strings':
      return [...((previous as string[] | undefined) ?? []), value];
    case 'int': {
      if (!/^-?[0-9]+$/.test(value)) throw new FlagError(`invalid value ${JSON.stringify(value)} for --${name}: not an integer`);
      return Number(value);
    }
    case 'duration':
      try {
        return parseDuration(value);
      } catch (e) {
        throw new FlagError(`invalid value for --${name}: ${(e as Error).message}`);
      }
    default:
      return value;
  }
}

/**
 * The original's --version (kubernetes/dns pkg/version): `raw`, or a Go boolean (`--version` alone
 * is true). Returns what to print, or undefined when the binary should run (`--version=false`, `=0`).
 */
export function versionRequest(value: FlagValue | undefined, flag = '--version'): 'raw' | 'plain' | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  if (text === 'raw') return 'raw';
  if (GO_TRUE.has(text)) return 'plain';
  if (GO_FALSE.has(text)) return undefined;
  throw new FlagError(`invalid value ${JSON.stringify(text)} for ${flag}: want true, false or raw`);
}

/** The --help text. */
export function usage(program: string, summary: string, specs: FlagSpecs): string {
  const lines = [`Usage of ${program}:`, summary, ''];
  for (const [name, spec] of Object.entries(specs).sort(([a], [b]) => a.localeCompare(b))) {
    if (spec.hidden) continue;
    // a duration as the flag takes it (10s), not the milliseconds it is kept in
    const shown = spec.type === 'duration' && typeof spec.default === 'number' ? formatDuration(spec.default) : JSON.stringify(spec.default);
    const def = spec.default === undefined || spec.default === '' ? '' : ` (default ${shown})`;
    const kind = spec.type === 'bool' ? '' : ` ${spec.type}`;
    lines.push(`  --${name}${kind}`, `        ${spec.help}${def}`);
  }
  return lines.join('\n') + '\n';
}
