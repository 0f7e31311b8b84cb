// prom-client's per-metric modules (lib/metrics/*.js), which it ships without types: each
// registers its metrics in a registry (packages/config/src/metrics/process-metrics.ts).
declare module 'prom-client/lib/metrics/*.js' {
  import type { Registry } from 'prom-client';
  const register: (registry: Registry, config: Record<string, unknown>) => void;
  export default register;
}
