// bench/results/latest.json holds one top-level key per bench script ("dns" for scripts/bench.mjs,
// "churn" for scripts/bench-headless-churn.mjs, "memory" / "footprint" for the memory part): each
// script replaces its own section and keeps the others, so the scripts can run separately and in
// any order.
import { spawn } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * bench/results, where the committed figures of full runs live; a --quick run writes to
 * bench/results/quick instead (not committed), so a development run never replaces them.
 */
export const RESULTS_DIR = join(new URL('..', import.meta.url).pathname, 'bench', 'results', ...(process.argv.includes('--quick') ? ['quick'] : []));
export const LATEST = join(RESULTS_DIR, 'latest.json');

export async function readResults() {
  try {
    return JSON.parse(await readFile(LATEST, 'utf8'));
  } catch (e) {
    if (e.code === 'ENOENT') return {};
    throw new Error(`${LATEST}: ${e.message}`);
  }
}

/** Replaces section `name` of latest.json with `data`, keeping every other section. */
export async function writeSection(name, data) {
  await mkdir(RESULTS_DIR, { recursive: true });
  const all = await readResults();
  all[name] = data;
  const tmp = `${LATEST}.tmp`;
  await writeFile(tmp, JSON.stringify(all, null, 2) + '\n');
  await rename(tmp, LATEST);
  return all;
}

/** The code measured: branch, commit, and whether files under git differ from it. */
export async function gitInfo() {
  const root = new URL('..', import.meta.url).pathname;
  const git = (...a) => new Promise((res) => {
    const p = spawn('git', a, { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] });
    let o = '';
    p.stdout.on('data', (d) => (o += d));
    p.on('exit', () => res(o.trim()));
    p.on('error', () => res(''));
  });
  return {
    branch: await git('rev-parse', '--abbrev-ref', 'HEAD'),
    commit: await git('rev-parse', '--short', 'HEAD'),
    // the bench's own outputs (a previous run's results) do not make the code dirty
    dirty: (await git('status', '--porcelain', '--untracked-files=no', '--', ':/', ':(top,exclude)bench/results')) !== '',
  };
}

/** The README's Performance tables from the "dns" section: `node scripts/bench-results.mjs --markdown`. */
export function markdown(d) {
  const n = (x) => (x === undefined ? 'n/a' : Math.round(x).toLocaleString('en-US'));
  const g = (prefix) => d.goals.find((x) => x.goal.startsWith(prefix));
  const verdict = (x) => (!x ? '' : x.met === null ? 'n/a' : x.met ? 'met' : '**not met**');
  const w = Object.fromEntries(d.workloads.map((x) => [x.name, x]));
  const rows = [
    ['| workload | kube-dns qps | reference qps | ratio | goal |', '|---|---|---|---|---|'],
    [`| repeated names | ${n(w.repeated.kubednsQps)} | ${n(w.repeated.ceilingQps)} (ceiling) | ${w.repeated.ratio}x | ≥ 0.9x: ${verdict(g('repeated'))} |`],
    [`| realistic mix | ${n(w.mix.kubednsQps)} | ${n(w.mix.ceilingQps)} (ceiling) | ${w.mix.ratio}x | ≥ 0.75x: ${verdict(g('realistic'))} |`],
    [`| unique NXDOMAIN names | ${n(w.nxdomain.kubednsQps)} | ${n(w.nxdomain.ceilingQps)} (ceiling) | ${w.nxdomain.ratio}x | |`],
    [`| mix over TCP, 100 connections | ${n(d.tcp.qps)} | ${n(d.tcp.udpQps)} (kube-dns, UDP) | ${d.tcp.ratioToUdp}x | ≥ 0.8x: ${verdict(g('TCP'))} |`],
    [`| the pod: dnsmasq's cache in front | ${n(d.pod.podQps)} | ${n(d.pod.bareQps)} (bare dnsmasq) | ${d.pod.ratio}x | ≥ 0.95x: ${verdict(g('pod'))} |`],
  ].flat();
  const L = (r) => `${r.p50Ms} / ${r.p99Ms} / ${r.p999Ms} ms`;
  const lat = [
    '', `| on the mix at ${n(d.latency.rate)} qps${d.latency.atHalfMax ? ` (at half kube-dns's maximum, ${n(d.latency.halfMaxRate)} qps, the ceiling's own p99 / p99.9 were ${d.latency.atHalfMax.ceiling.p99Ms} / ${d.latency.atHalfMax.ceiling.p999Ms} ms)` : ''} | p50 / p99 / p99.9 | goal |`, '|---|---|---|',
    `| kube-dns, ${d.latency.seconds} s${d.latency.slices ? ` (${d.latency.slices} runs, taking turns with the ceiling)` : ''} | ${L(d.latency.kubedns)} | p99 ≤ 1.5x the ceiling's: ${verdict(g('p99 at'))}; p99.9 ≤ 2x: ${verdict(g('p99.9'))} |`,
    `| ceiling, ${d.latency.seconds} s${d.latency.slices ? ` (${d.latency.slices} runs)` : ''} | ${L(d.latency.ceiling)} | |`,
    ...(d.latency.apart ? [
      `| kube-dns, the same rate with dnsperf on CPU 0 and the servers on CPU 1 | ${L(d.latency.apart.kubedns)} | not judged: p99 ${d.latency.apart.p99Ratio}x, p99.9 ${d.latency.apart.p999Ratio}x the ceiling's |`,
      `| ceiling, the same | ${L(d.latency.apart.ceiling)} | |`,
    ] : []),
    `| kube-dns${d.abuse.wildcardsFlag ? ' --wildcards' : ''}, service churn, median of ${d.abuse.pairs ?? 1} runs of ${d.abuse.seconds} s | ${L(d.abuse.without)} | |`,
    `| the same with the abuser at 100 qps (runs alternate) | ${L(d.abuse.with)} | p99 ≤ 2x without the abuser: ${verdict(g('abuse'))} |`,
    ...loopRows(d, n, verdict(g('no event-loop'))),
    ...(d.latency.hostCheck?.busy ? ['', `**The host was busy during this run:** the ceiling's own p99 at ${n(d.latency.rate)} qps was ${d.latency.hostCheck.ceilingP99OverP50}x its p50 (over ${d.latency.hostCheck.limit}x; 3-5x on a quiet day), so this run's ratios, saturated and at a fixed rate, measure the host more than kube-dns (\`docs/benchmarks.md\`, "Reading the figures").`] : []),
  ];
  const when = `Figures of \`${d.command}\` on ${d.date.slice(0, 16).replace('T', ' ')} UTC, code at ${d.code.commit}${d.code.dirty ? ' (with uncommitted changes)' : ''}, load average ${d.machine.loadavgAtStart[0]} at the start and ${d.machine.loadavgAtEnd?.[0]} at the end (${d.machine.cpus} cores).`;
  return [when, '', ...rows, ...lat].join('\n');
}

/**
 * The event-loop rows: kube-dns's largest loop delay over its own runs at the judged rate, and at
 * half its maximum when that is another rate. Results written before 2026-11-26, 16:00 UTC, have no
 * `rate`: their figure covered the ceiling's runs too, at half the maximum.
 */
function loopRows(d, n, verdict) {
  const e = d.eventLoop;
  const text = (x) => (x.exported
    ? `${x.maxMs} ms${x.cpuWaitMs !== undefined ? ` (the loop's thread waited ${x.cpuWaitMs} ms for a CPU${x.stallsOver5ms ? `; stalls over 5 ms: ${x.stallsOver5ms.cpuWait} mostly waiting for a CPU, ${x.stallsOver5ms.process} of kube-dns's own` : ''})` : ''}`
    : 'not exported by this build');
  if (e.rate === undefined) return [`| largest event-loop delay in the ${e.seconds} s run | ${text(e)} | < 5 ms: ${verdict} |`];
  return [
    ...(e.atHalfMax ? [`| largest event-loop delay, kube-dns's ${e.atHalfMax.seconds} s at ${n(e.atHalfMax.rate)} qps (half its maximum) | ${text(e.atHalfMax)} | |`] : []),
    `| largest event-loop delay, kube-dns's ${e.seconds} s at ${n(e.rate)} qps | ${text(e)} | < 5 ms: ${verdict} |`,
  ];
}

/**
 * The headless churn's table from the "churn" section (scripts/bench-headless-churn.mjs): per
 * size, the update's and the rebuild's median and max, their ratio, and the largest update against
 * the 5 ms stall goal, judged at the size the goal names.
 */
export function churnMarkdown(c) {
  const n = (x) => x.toLocaleString('en-US');
  const goal = c.goals[0];
  const verdict = (g) => (g.met === null ? 'n/a' : g.met ? 'met' : '**not met**');
  const { ms } = c.stallGoal;
  const largest = (s) => (s.endpoints === goal?.endpoints && !s.duplicate ? `< ${ms} ms: ${verdict(goal)}` : s.update.maxMs < ms ? `under ${ms} ms` : `**over ${ms} ms**`);
  return [
    `Headless churn, \`${c.command}\` on ${c.date.slice(0, 16).replace('T', ' ')} UTC, code at ${c.code.commit}${c.code.dirty ? ' (with uncommitted changes)' : ''}: the zone alone, one EndpointSlice of ${c.sliceSize} endpoints replaced and the Service's view asked, ${c.changes} times per size; the reference is the same change followed by the view rebuilt from every endpoint, as before the update (node ${c.node}, ${c.heap}).`,
    '',
    '| headless Service | update: median / max | rebuild (reference): median / max | update / rebuild (medians) | largest update, stall goal | first query after the sync: view built then / at the sync |',
    '|---|---|---|---|---|---|',
    ...c.sizes.map((s) => `| ${n(s.endpoints)} endpoints${s.duplicate ? ', one address listed twice' : ''} | ${s.update.medianMs} / ${s.update.maxMs} ms | ${s.rebuild.medianMs} / ${s.rebuild.maxMs} ms | ${s.ratio}x | ${largest(s)} | ${s.firstQuery ? `${s.firstQuery.lazyMs} / ${s.firstQuery.builtAtSyncMs} ms` : 'n/a'} |`),
    ...(c.sizes.some((s) => s.created)
      ? [
          '',
          'The same Service created after the sync, its slices arriving one at a time (the arrival that brings it to 500 endpoints builds its view, the later ones update it); the reference is the first query building the whole view, as a zone does for a view nobody asked for before:',
          '',
          '| headless Service | each slice\'s arrival: median / max | then the first query | reference: the first query building the view | the Service arriving after its slices, then its first query (builds the view) | the Service\'s ports changed, then the query: max of 5 |',
          '|---|---|---|---|---|---|',
          ...c.sizes.filter((s) => s.created).map((s) => `| ${n(s.endpoints)} endpoints${s.duplicate ? ', one address listed twice' : ''} | ${s.created.sliceArrival.medianMs} / ${s.created.sliceArrival.maxMs} ms | ${s.created.firstQueryMs} ms | ${s.created.referenceFirstQueryMs} ms | ${s.created.serviceAfterSlices ? `${s.created.serviceAfterSlices.arrivalMs} / ${s.created.serviceAfterSlices.firstQueryMs}` : s.created.serviceAfterSlicesMs} ms | ${s.serviceChange.maxMs} ms |`),
        ]
      : []),
  ].join('\n');
}

/** The README's bench-figures block: the DNS tables, then the headless churn's when it was measured. */
export function block(all) {
  return [markdown(all.dns), ...(all.churn ? ['', churnMarkdown(all.churn)] : [])].join('\n');
}

// `--markdown` prints the tables; `--readme` replaces them in README.md between the
// <!-- bench-figures --> markers (after a rerun on a quiet machine: one command).
if (process.argv[1] === new URL(import.meta.url).pathname) {
  const all = await readResults();
  if (!all.dns) throw new Error(`${LATEST}: no "dns" section; run npm run bench first`);
  if (process.argv.includes('--readme')) {
    const readme = join(RESULTS_DIR, '..', '..', 'README.md');
    const text = await readFile(readme, 'utf8');
    const re = /(<!-- bench-figures[^>]*-->\n)[\s\S]*?(\n<!-- \/bench-figures -->)/;
    if (!re.test(text)) throw new Error('README.md: no <!-- bench-figures --> ... <!-- /bench-figures --> block');
    await writeFile(readme, text.replace(re, (_, a, b) => `${a}${block(all)}${b}`));
    process.stdout.write('README.md: Performance figures replaced from bench/results/latest.json\n');
  } else process.stdout.write(`${block(all)}\n`);
}
