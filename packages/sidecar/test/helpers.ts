// Test helpers: scrape and parse the exposition with a real Prometheus text-format parser.
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';

export async function scrape(port: number, path = '/metrics'): Promise<{ text: string; families: Map<string, ParsedFamily> }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status}`);
  const text = await res.text();
  const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
  return { text, families };
}

/** The value of an unlabelled sample, or of the sample with exactly `labels`. */
export function value(families: Map<string, ParsedFamily>, name: string, labels?: Record<string, string>): number | undefined {
  const f = families.get(name);
  const sample = f?.metrics.find((m) => JSON.stringify(m.labels ?? {}) === JSON.stringify(labels ?? {}));
  return sample?.value === undefined ? undefined : Number(sample.value);
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const r = await check();
      if (r !== undefined && r !== false) return r;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

export async function getHealth(port: number, label: string): Promise<{ status: number; contentType: string | null; body: string }> {
  const res = await fetch(`http://127.0.0.1:${port}/healthcheck/${label}`);
  return { status: res.status, contentType: res.headers.get('content-type'), body: await res.text() };
}
