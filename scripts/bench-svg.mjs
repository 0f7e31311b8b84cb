// Draws the "dns" section of bench/results/latest.json as plain SVG text: qps of each workload
// next to its reference (the ceiling, UDP, or a bare dnsmasq) with the goal marked, and latency
// percentiles at the fixed rate on a log scale; then, when measured, the "churn" section (a
// headless Service's view updated against rebuilt, ms on a log scale). No dependency: the figure
// is a few rects and texts.

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (n) => Math.round(n).toLocaleString('en-US');
const COLORS = { kubedns: '#2b6cb0', ref: '#a0aec0', abuse: '#c05621', ok: '#2f855a', bad: '#c53030' };

export function drawSvg(all) {
  const d = all.dns;
  const W = 960;
  const out = [];
  const text = (x, y, s, o = {}) =>
    out.push(`<text x="${x}" y="${y}" font-size="${o.size ?? 12}"${o.anchor ? ` text-anchor="${o.anchor}"` : ''}${o.bold ? ' font-weight="bold"' : ''} fill="${o.fill ?? '#1a202c'}">${esc(s)}</text>`);
  const rect = (x, y, w, h, fill) => out.push(`<rect x="${x}" y="${y}" width="${Math.max(0, w).toFixed(1)}" height="${h}" fill="${fill}"/>`);

  let y = 28;
  text(16, y, `kube-dns bench, ${d.date.slice(0, 16).replace('T', ' ')} UTC: ${d.command} on ${d.code.branch} ${d.code.commit}${d.code.dirty ? ' (uncommitted changes)' : ''}`, { size: 13, bold: true });
  y += 18;
  text(16, y, `node ${d.machine.node}, ${d.machine.cpus} cores shared by dnsperf and the servers, load average ${d.machine.loadavgAtStart[0]} at the start and ${d.machine.loadavgAtEnd?.[0] ?? '?'} at the end, ${d.setup.services} services`, { size: 11, fill: '#4a5568' });

  // --- throughput
  y += 28;
  text(16, y, 'Throughput (qps, dnsperf on loopback): kube-dns (blue) against its reference in the same run (grey); tick = goal', { size: 13 });
  const goal = (name) => d.goals.find((g) => g.goal.startsWith(name));
  const rows = [
    ...d.workloads.map((w) => ({ label: { repeated: 'repeated names', mix: 'realistic mix', nxdomain: 'unique NXDOMAIN' }[w.name] ?? w.name, ref: 'ceiling', refQps: w.ceilingQps, qps: w.kubednsQps, ratio: w.ratio, goal: goal(w.name === 'repeated' ? 'repeated' : w.name === 'mix' ? 'realistic mix' : '-') })),
    { label: 'mix over TCP, 100 conns', ref: 'kube-dns UDP', refQps: d.tcp.udpQps, qps: d.tcp.qps, ratio: d.tcp.ratioToUdp, goal: goal('TCP') },
    { label: 'pod: dnsmasq cache', ref: 'bare dnsmasq', refQps: d.pod.bareQps, qps: d.pod.podQps, ratio: d.pod.ratio, goal: goal('pod') },
  ];
  const maxQps = Math.max(...rows.flatMap((r) => [r.refQps, r.qps]));
  const X0 = 190;
  const BW = 470;
  const sx = (q) => (q / maxQps) * BW;
  y += 12;
  for (const r of rows) {
    text(16, y + 16, r.label, { bold: true });
    rect(X0, y + 2, sx(r.refQps), 12, COLORS.ref);
    text(X0 + sx(r.refQps) + 6, y + 12, `${fmt(r.refQps)} (${r.ref})`, { size: 11 });
    rect(X0, y + 16, sx(r.qps), 12, COLORS.kubedns);
    text(X0 + sx(r.qps) + 6, y + 26, fmt(r.qps), { size: 11 });
    if (r.goal?.limit !== undefined) {
      const gx = X0 + sx(r.refQps * r.goal.limit);
      out.push(`<line x1="${gx.toFixed(1)}" y1="${y + 13}" x2="${gx.toFixed(1)}" y2="${y + 31}" stroke="#1a202c" stroke-width="2"/>`);
    }
    const verdict = r.goal ? `${r.ratio}x (goal ${r.goal.limit}x) ${r.goal.met ? 'met' : 'not met'}` : `${r.ratio}x`;
    text(W - 16, y + 20, verdict, { anchor: 'end', bold: true, fill: r.goal ? (r.goal.met ? COLORS.ok : COLORS.bad) : '#1a202c' });
    y += 40;
  }

  // --- latency, log scale
  y += 16;
  const which = d.latency.atHalfMax ? `the highest rate up to half kube-dns's maximum with a clean reference` : `half kube-dns's maximum`;
  text(16, y, `Latency on the realistic mix at a fixed ${fmt(d.latency.rate)} qps (${which}), ms, log scale`, { size: 13 });
  if (d.latency.hostCheck?.busy) {
    y += 16;
    text(16, y, `The host was busy: the ceiling's own p99 was ${d.latency.hostCheck.ceilingP99OverP50}x its p50 (3-5x on a quiet day): this run's ratios measure the host more than kube-dns`, { size: 11, bold: true, fill: '#c53030' });
  }
  const series = [
    { label: `kube-dns (${d.latency.seconds} s)`, r: d.latency.kubedns, fill: COLORS.kubedns },
    { label: `ceiling (${d.latency.seconds} s)`, r: d.latency.ceiling, fill: COLORS.ref },
    // the same rate with dnsperf on a core of its own (reported, not judged)
    { label: 'kube-dns, dnsperf on a core of its own (not judged)', r: d.latency.apart?.kubedns, fill: '#9f7aea' },
    { label: 'ceiling, dnsperf on a core of its own', r: d.latency.apart?.ceiling, fill: '#cbd5e0' },
    { label: `kube-dns${d.abuse.wildcardsFlag ? ' --wildcards' : ''}, churn, no abuser (median of ${d.abuse.pairs ?? 1} × ${d.abuse.seconds} s)`, r: d.abuse.without, fill: '#63b3ed' },
    { label: 'the same with the abuser at 100 qps', r: d.abuse.with, fill: COLORS.abuse },
  ].filter((s) => s.r);
  const all_ = series.flatMap((s) => [s.r.p50Ms, s.r.p99Ms, s.r.p999Ms]).filter((v) => v > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...all_))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...all_))));
  const lx = (v) => (Math.log10(Math.max(v, lo) / lo) / Math.log10(hi / lo)) * BW;
  y += 16;
  const top = y;
  for (const [key, name] of [['p50Ms', 'p50'], ['p99Ms', 'p99'], ['p999Ms', 'p99.9']]) {
    text(16, y + 14 + (series.length * 14) / 2 - 7, name, { bold: true });
    for (const s of series) {
      rect(X0, y + 2, lx(s.r[key]), 11, s.fill);
      text(X0 + lx(s.r[key]) + 6, y + 12, `${s.r[key]} ms  ${s.label}`, { size: 11 });
      y += 14;
    }
    y += 10;
  }
  for (let v = lo; v <= hi * 1.0001; v *= 10) {
    const gx = X0 + lx(v);
    out.push(`<line x1="${gx.toFixed(1)}" y1="${top}" x2="${gx.toFixed(1)}" y2="${y - 6}" stroke="#e2e8f0" stroke-width="1"/>`);
    text(gx, y + 6, v >= 1 ? `${v} ms` : `${+v.toPrecision(1)} ms`, { size: 10, anchor: 'middle', fill: '#4a5568' });
  }
  y += 24;
  if (all.churn) y = drawChurn(all.churn, { text, rect, out, y, X0, W, BW });
  const lines = [...d.goals, ...(all.churn?.goals ?? [])].map((g) => `${g.met === null ? 'n/a' : g.met ? 'met' : 'NOT met'}: ${g.goal} (${g.detail})`);
  for (const l of lines) {
    const fill = l.startsWith('met') ? COLORS.ok : l.startsWith('n/a') ? '#4a5568' : COLORS.bad;
    // SVG text does not wrap: cut at a space before the right edge (11 px Helvetica is about 5.9 px
    // a character, so 150 fit in the width), the rest indented on the lines below
    let rest = l;
    for (let first = true; rest; first = false) {
      const room = first ? 150 : 146;
      const cut = rest.length <= room ? rest.length : rest.lastIndexOf(' ', room) > 0 ? rest.lastIndexOf(' ', room) : room;
      text(first ? 16 : 40, y, rest.slice(0, cut), { size: 11, fill });
      rest = rest.slice(cut).trimStart();
      y += 15;
    }
  }
  y += 6;
  // the grid lines go under the bars: they were pushed last, so lift the bars by reordering
  const grid = out.filter((s) => s.includes('stroke="#e2e8f0"'));
  const rest = out.filter((s) => !s.includes('stroke="#e2e8f0"'));
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${y}" viewBox="0 0 ${W} ${y}" font-family="Helvetica, Arial, sans-serif">\n<rect width="100%" height="100%" fill="#ffffff"/>\n${[...grid, ...rest].join('\n')}\n</svg>\n`;
}

/** The headless churn: per size, the update's median (blue) against the rebuild's (grey), ms, log scale; returns the next y. */
function drawChurn(c, { text, rect, out, y, X0, W, BW: full }) {
  const BW = full * 0.85; // room for the longest bar's label before the verdict on the right
  text(16, y, `Headless churn (the zone alone): one EndpointSlice of ${c.sliceSize} replaced and the view asked, median of ${c.changes}, ms, log scale`, { size: 13 });
  y += 16;
  text(16, y, `kube-dns's update (blue), the view rebuilt from every endpoint (grey): ${c.command}, ${c.date.slice(0, 16).replace('T', ' ')} UTC, ${c.code.commit}${c.code.dirty ? ' (uncommitted changes)' : ''}`, { size: 11, fill: '#4a5568' });
  const values = c.sizes.flatMap((s) => [s.update.medianMs, s.rebuild.medianMs]).filter((v) => v > 0);
  const lo = Math.pow(10, Math.floor(Math.log10(Math.min(...values))));
  const hi = Math.pow(10, Math.ceil(Math.log10(Math.max(...values))));
  const lx = (v) => (Math.log10(Math.max(v, lo) / lo) / Math.log10(hi / lo)) * BW;
  y += 8;
  const top = y;
  for (const s of c.sizes) {
    text(16, y + 16, `${fmt(s.endpoints)} endpoints${s.duplicate ? ', listed twice' : ''}`, { bold: true });
    rect(X0, y + 2, lx(s.rebuild.medianMs), 12, COLORS.ref);
    text(X0 + lx(s.rebuild.medianMs) + 6, y + 12, `${s.rebuild.medianMs} ms (max ${s.rebuild.maxMs})`, { size: 11 });
    rect(X0, y + 16, lx(s.update.medianMs), 12, COLORS.kubedns);
    text(X0 + lx(s.update.medianMs) + 6, y + 26, `${s.update.medianMs} ms (max ${s.update.maxMs})`, { size: 11 });
    const g = s.duplicate ? undefined : c.goals.find((x) => x.endpoints === s.endpoints);
    const verdict = g ? `, max < ${g.limit} ms ${g.met === null ? 'n/a' : g.met ? 'met' : 'not met'}` : '';
    text(W - 16, y + 20, `${s.ratio}x${verdict}`, { anchor: 'end', bold: true, fill: g ? (g.met === null ? '#4a5568' : g.met ? COLORS.ok : COLORS.bad) : '#1a202c' });
    y += 40;
  }
  for (let v = lo; v <= hi * 1.0001; v *= 10) {
    const gx = X0 + lx(v);
    out.push(`<line x1="${gx.toFixed(1)}" y1="${top}" x2="${gx.toFixed(1)}" y2="${y - 6}" stroke="#e2e8f0" stroke-width="1"/>`);
    text(gx, y + 6, v >= 1 ? `${v} ms` : `${+v.toPrecision(1)} ms`, { size: 10, anchor: 'middle', fill: '#4a5568' });
  }
  return y + 30;
}
