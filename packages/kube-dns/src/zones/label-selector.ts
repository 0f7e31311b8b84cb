// Kubernetes label selectors (the syntax of `kubectl get -l` and of a list's labelSelector):
//   key=value, key==value, key!=value, key in (a,b), key notin (a,b), key, !key
// joined by commas (all must hold). Pure: parse once at start (a bad selector stops the binary
// with one line), match per object on update, never per query.

export type Requirement =
  | { key: string; op: 'in' | 'notin'; values: string[] }
  | { key: string; op: 'exists' | '!exists' };

export interface LabelSelector {
  /** The selector as given (for logs and the API's labelSelector parameter). */
  text: string;
  requirements: Requirement[];
}

// A label key: optional DNS-subdomain prefix and '/', then a name of at most 63 characters.
const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
// A label value: empty, or at most 63 characters of alphanumerics, '-', '_', '.', alphanumeric at both ends.
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

function checkKey(k: string): string {
  if (!KEY.test(k) || (k.includes('/') && k.indexOf('/') > 253)) throw new Error(`${JSON.stringify(k)} is not a valid label key`);
  return k;
}

function checkValue(v: string): string {
  if (!VALUE.test(v)) throw new Error(`${JSON.stringify(v)} is not a valid label value`);
  return v;
}

/** Splits on commas that are not inside parentheses. */
function splitTop(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i));
      start = i + 1;
    }
    if (depth < 0) throw new Error('unbalanced ")"');
  }
  if (depth !== 0) throw new Error('unbalanced "("');
  out.push(text.slice(start));
  return out;
}

function parseRequirement(raw: string): Requirement {
  const s = raw.trim();
  if (s === '') throw new Error('empty requirement (two commas in a row, or a trailing comma)');
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(s);
  if (set) {
    const values = set[3]!.split(',').map((v) => checkValue(v.trim()));
    return { key: checkKey(set[1]!), op: set[2] as 'in' | 'notin', values };
  }
  // Kubernetes also parses `key>n` and `key<n` (node affinity's Gt/Lt); not taken here
  const compare = /^([^<>=!\s]+)\s*([<>])/.exec(s);
  if (compare) throw new Error(`${JSON.stringify(s)}: the "${compare[2]}" operator is not supported (=, ==, !=, in, notin, key and !key are)`);
  const eq = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(s);
  if (eq) {
    const value = checkValue(eq[3]!.trim());
    return { key: checkKey(eq[1]!), op: eq[2] === '!=' ? 'notin' : 'in', values: [value] };
  }
  if (s.startsWith('!')) return { key: checkKey(s.slice(1).trim()), op: '!exists' };
  return { key: checkKey(s), op: 'exists' };
}

/** Throws an Error saying what is wrong; '' (no requirement) selects everything. */
export function parseLabelSelector(text: string): LabelSelector {
  const trimmed = text.trim();
  if (trimmed === '') return { text: '', requirements: [] };
  return { text: trimmed, requirements: splitTop(trimmed).map(parseRequirement) };
}

export function matchesLabels(sel: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  for (const r of sel.requirements) {
    const has = labels !== undefined && Object.hasOwn(labels, r.key);
    switch (r.op) {
      case 'exists':
        if (!has) return false;
        break;
      case '!exists':
        if (has) return false;
        break;
      case 'in':
        if (!has || !r.values.includes(labels[r.key]!)) return false;
        break;
      case 'notin':
        // as in Kubernetes: a missing key satisfies `notin` and `!=`
        if (has && r.values.includes(labels[r.key]!)) return false;
        break;
    }
  }
  return true;
}
