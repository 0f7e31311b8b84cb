// Options for in-process sidecars in tests: loopback, a free port, short intervals.
import { DEFAULT_OPTIONS, type ProbeSpec, type ProbeType, type SidecarOptions } from '../src/index.js';

export function testOptions(over: Partial<SidecarOptions>): SidecarOptions {
  return { ...DEFAULT_OPTIONS, prometheusAddr: '127.0.0.1', prometheusPort: 0, dnsmasqPollIntervalMs: 100, ...over };
}

/** A probe with a sub-second interval: only possible through the API (the flag takes whole seconds). */
export function probe(label: string, port: number, name: string, intervalMs: number, type: ProbeType = 'ANY'): ProbeSpec {
  return {
    label,
    server: { host: '127.0.0.1', port },
    serverText: `127.0.0.1:${port}`,
    name: name.endsWith('.') ? name : `${name}.`,
    intervalMs,
    type,
  };
}
