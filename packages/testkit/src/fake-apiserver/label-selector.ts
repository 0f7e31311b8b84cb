// labelSelector of lists and watches, as kube-apiserver applies it: `k=v`, `k==v`, `k!=v`,
// `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, comma-joined. A selector it cannot read is a 400.
import type { KubeObject } from './store.js';

export type LabelMatcher = (o: KubeObject | undefined) => boolean;

function splitTop(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')') depth--;
    else if (text[i] === ',' && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) throw new Error(`unbalanced parentheses in ${JSON.stringify(text)}`);
  out.push(text.slice(start));
  return out;
}

type Test = (labels: Record<string, string>) => boolean;

function requirement(raw: string): Test {
  const s = raw.trim();
  let m = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(s);
  if (m) {
    const [, key, op, list] = m as unknown as [string, string, string, string];
    const values = list.split(',').map((v) => v.trim());
    return op === 'in' ? (l) => key in l && values.includes(l[key]!) : (l) => !(key in l) || !values.includes(l[key]!);
  }
  m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(s);
  if (m) {
    const [, key, op, value] = m as unknown as [string, string, string, string];
    return op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value;
  }
  if (/^!\s*\S+$/.test(s)) {
    const key = s.slice(1).trim();
    return (l) => !(key in l);
  }
  if (/^\S+$/.test(s)) return (l) => s in l;
  throw new Error(`unable to parse requirement ${JSON.stringify(s)}`);
}

/** Throws for a selector that cannot be parsed; '' or undefined matches everything. */
export function labelMatcher(selector: string | undefined): LabelMatcher {
  if (!selector || selector.trim() === '') return () => true;
  const tests = splitTop(selector).map(requirement);
  return (o) => {
    const labels = ((o?.metadata as { labels?: Record<string, string> } | undefined)?.labels ?? {}) as Record<string, string>;
    return tests.every((t) => t(labels));
  };
}
