// A stacked-area chart as SVG, from Prometheus range-query series: enough to show a dashboard
// panel in the README without a Grafana (rsvg-convert turns it into a PNG).

export interface Series {
  name: string;
  /** [unix seconds, value] */
  points: [number, number][];
}

const COLORS = ['#3274d9', '#e02f44', '#56a64b', '#ff9830', '#a352cc', '#8ab8ff', '#f2cc0c', '#73bf69'];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A "nice" axis maximum: 1, 2 or 5 times a power of ten, at least `v`. */
function niceMax(v: number): number {
  if (!(v > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5, 10].map((m) => m * p).find((m) => m >= v)!;
}

export function stackedAreaSvg(title: string, unit: string, series: Series[], colors: string[] = [], width = 900, height = 360): string {
  const left = 60;
  const right = 170;
  const top = 36;
  const bottom = 34;
  const w = width - left - right;
  const h = height - top - bottom;
  const times = [...new Set(series.flatMap((s) => s.points.map(([t]) => t)))].sort((a, b) => a - b);
  const t0 = times[0] ?? 0;
  const t1 = times.at(-1) ?? 1;
  const byTime = series.map((s) => new Map(s.points));
  // cumulative sums per time, bottom series first
  const stacks = series.map(() => new Array<number>(times.length).fill(0));
  times.forEach((t, i) => {
    let acc = 0;
    series.forEach((_, k) => {
      acc += byTime[k]!.get(t) ?? 0;
      stacks[k]![i] = acc;
    });
  });
  const max = niceMax(Math.max(0, ...times.map((_, i) => stacks.at(-1)?.[i] ?? 0)));
  const x = (t: number) => left + (t1 === t0 ? 0 : ((t - t0) / (t1 - t0)) * w);
  const y = (v: number) => top + h - (v / max) * h;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="#181b1f"/>`,
    `<text x="${left}" y="22" fill="#ccccdc" font-size="15">${esc(title)}</text>`,
  ];
  for (let g = 0; g <= 4; g++) {
    const v = (max * g) / 4;
    out.push(`<line x1="${left}" x2="${left + w}" y1="${y(v)}" y2="${y(v)}" stroke="#2c3235"/>`);
    out.push(`<text x="${left - 6}" y="${y(v) + 4}" fill="#8e8e8e" text-anchor="end">${+v.toPrecision(3)}</text>`);
  }
  out.push(`<text x="12" y="${top + h / 2}" fill="#8e8e8e" transform="rotate(-90 12 ${top + h / 2})" text-anchor="middle">${esc(unit)}</text>`);
  for (let k = series.length - 1; k >= 0; k--) {
    const upper = times.map((t, i) => `${x(t).toFixed(1)},${y(stacks[k]![i]!).toFixed(1)}`);
    const lower = times.map((t, i) => `${x(t).toFixed(1)},${y(k ? stacks[k - 1]![i]! : 0).toFixed(1)}`).reverse();
    const color = colors[k] ?? COLORS[k % COLORS.length];
    out.push(`<polygon points="${[...upper, ...lower].join(' ')}" fill="${color}" fill-opacity="0.35"/>`);
    out.push(`<polyline class="series" points="${upper.join(' ')}" fill="none" stroke="${color}" stroke-width="1.5"/>`);
  }
  const secs = t1 - t0;
  for (let g = 0; g <= 4; g++) {
    const t = t0 + (secs * g) / 4;
    out.push(`<text x="${x(t)}" y="${top + h + 18}" fill="#8e8e8e" text-anchor="middle">${g === 4 ? 'now' : `-${Math.round(secs - (t - t0))} s`}</text>`);
  }
  series.forEach((s, k) => {
    const ly = top + 10 + k * 18;
    out.push(`<rect x="${left + w + 14}" y="${ly - 9}" width="10" height="10" fill="${colors[k] ?? COLORS[k % COLORS.length]}"/>`);
    out.push(`<text x="${left + w + 30}" y="${ly}" fill="#ccccdc">${esc(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}
