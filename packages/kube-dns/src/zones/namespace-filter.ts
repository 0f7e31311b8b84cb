// Which namespaces are served: --namespaces (a fixed list) and/or --namespace-labels (the gate's
// live set). Undefined when neither is given, so the resolver does no work for it.
import type { NamespaceGate } from './namespace-gate.js';

export function namespaceFilter(listed: readonly string[], gate: NamespaceGate | undefined): ((ns: string) => boolean) | undefined {
  const fixed = listed.length ? new Set(listed) : undefined;
  if (fixed && gate) return (ns) => fixed.has(ns) && gate.allows(ns);
  if (fixed) return (ns) => fixed.has(ns);
  if (gate) return (ns) => gate.allows(ns);
  return undefined;
}
