// The process metrics kube-dns and the sidecar export: prom-client's defaults, less the
// event-loop lag gauges (src/metrics/process-metrics.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { collectProcessMetrics } from '@kube-dns/config/process-metrics';

const names = async (r: Registry) => (await r.getMetricsAsJSON()).map((m) => m.name);

test("prom-client's default metrics, every one of them but nodejs_eventloop_lag_*, with values", async () => {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  const ours = new Registry();
  collectProcessMetrics(ours);
  const expected = (await names(defaults)).filter((n) => !n.startsWith('nodejs_eventloop_lag'));
  // a default metric prom-client adds in a later version would be missing here: this fails then
  assert.deepEqual(await names(ours), expected);
  assert.ok(expected.includes('process_resident_memory_bytes') && expected.includes('nodejs_heap_size_used_bytes') && expected.includes('nodejs_gc_duration_seconds'));
  const text = await ours.metrics();
  assert.doesNotMatch(text, /nodejs_eventloop_lag/);
  const rss = Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1]);
  assert.ok(rss > 10 * 1024 * 1024, `process_resident_memory_bytes is this process's RSS: ${rss}`);
});

test('gcDuration: false leaves out nodejs_gc_duration_seconds and nothing else', async () => {
  const all = new Registry();
  collectProcessMetrics(all);
  const lean = new Registry();
  collectProcessMetrics(lean, { gcDuration: false });
  assert.deepEqual(await names(lean), (await names(all)).filter((n) => n !== 'nodejs_gc_duration_seconds'));
  assert.doesNotMatch(await lean.metrics(), /nodejs_gc_duration_seconds/);
});
