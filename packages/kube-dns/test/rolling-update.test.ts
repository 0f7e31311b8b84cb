// A rolling update under load through two replicas: the client spreads queries over the replicas
// that are ready (as the Service does once the endpoints controller follows /readiness) and
// fails over to another on a miss (as dnsmasq does with several servers). A replica gets SIGTERM
// and a new one replaces it; with the lameduck period not one query goes unanswered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { query } from '@kube-dns/dns-client';
import { clusterIPService, freePort, startFakeApiServer, type FakeApiServer } from '@kube-dns/testkit';

const BIN = fileURLToPath(new URL('../../bin/kube-dns.js', import.meta.url));

interface Replica {
  name: string;
  dnsPort: number;
  healthzPort: number;
  exited: Promise<number | null>;
  kill(sig: NodeJS.Signals): void;
}

async function replica(api: FakeApiServer, name: string, lameduck: string, t: { after(fn: () => unknown): void }): Promise<Replica> {
  const [dnsPort, healthzPort] = [await freePort(), await freePort()];
  const p = spawn(
    process.execPath,
    [BIN, '--dns-bind-address=127.0.0.1', `--dns-port=${dnsPort}`, '--healthz-bind-address=127.0.0.1', `--healthz-port=${healthzPort}`, `--kubecfg-file=${api.kubeconfigPath}`, `--lameduck=${lameduck}`],
    { stdio: 'ignore' },
  );
  t.after(() => p.kill('SIGKILL'));
  const exited = new Promise<number | null>((resolve) => p.on('exit', (code) => resolve(code)));
  return { name, dnsPort, healthzPort, exited, kill: (sig) => p.kill(sig) };
}

const isReady = (r: Replica): Promise<boolean> =>
  fetch(`http://127.0.0.1:${r.healthzPort}/readiness`, { signal: AbortSignal.timeout(500) }).then((x) => x.status === 200, () => false);

async function waitReady(r: Replica): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!(await isReady(r))) {
    if (Date.now() > deadline) throw new Error(`${r.name} not ready`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

async function rollingUpdate(t: { after(fn: () => unknown): void }, lameduck: string) {
  const api = await startFakeApiServer();
  t.after(() => api.close());
  api.upsert('services', clusterIPService('default', 'web', ['10.0.0.80']));
  const a = await replica(api, 'a', lameduck, t);
  const b = await replica(api, 'b', lameduck, t);
  await Promise.all([waitReady(a), waitReady(b)]);

  // the "Service": replicas whose /readiness says 200, polled every 150 ms; like the kubelet's
  // failureThreshold, a replica leaves after 2 failed polls in a row (the real kubelet and
  // endpoints controller take seconds; faster here only shortens the test)
  const known = new Set<Replica>([a, b]);
  const failedPolls = new Map<Replica, number>();
  let ready: Replica[] = [a, b];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const checks = await Promise.all([...known].map(async (r) => [r, await isReady(r)] as const));
      for (const [r, ok] of checks) failedPolls.set(r, ok ? 0 : (failedPolls.get(r) ?? 0) + 1);
      ready = [...known].filter((r) => (failedPolls.get(r) ?? 1) < 2 && (ready.includes(r) || failedPolls.get(r) === 0));
      await new Promise((res) => setTimeout(res, 150));
    }
  })();

  // the load: a query every 5 ms, round robin over the ready replicas, failing over on a miss
  let sent = 0;
  let missed = 0;
  let unanswered = 0;
  const answeredBy = new Map<string, number[]>();
  let rr = 0;
  let stopping = false;
  let sentToStopping = 0;
  const ask = async (): Promise<void> => {
    const tried = new Set<Replica>();
    for (let attempt = 0; attempt < 3; attempt++) {
      const pool = ready.filter((r) => !tried.has(r));
      const r = pool[rr++ % Math.max(1, pool.length)] ?? [...known].find((x) => !tried.has(x));
      if (!r) break;
      tried.add(r);
      if (r.name === 'a' && stopping) sentToStopping++;
      try {
        const reply = await query({ host: '127.0.0.1', port: r.dnsPort }, { name: 'web.default.svc.cluster.local', type: 'A', timeoutMs: 1000 });
        if (reply.packet.rcode === 'NOERROR') {
          const at = answeredBy.get(r.name) ?? [];
          at.push(Date.now());
          answeredBy.set(r.name, at);
          return;
        }
      } catch {
        /* a miss: try another replica */
      }
      missed++;
    }
    unanswered++;
  };
  let loading = true;
  const inflight: Promise<void>[] = [];
  const load = (async () => {
    while (loading) {
      sent++;
      inflight.push(ask());
      await new Promise((res) => setTimeout(res, 5));
    }
  })();

  await new Promise((res) => setTimeout(res, 500));
  const termAt = Date.now();
  stopping = true;
  a.kill('SIGTERM');
  let exitedAt = 0;
  void a.exited.then(() => (exitedAt = Date.now()));
  const a2 = await replica(api, 'a2', lameduck, t);
  await waitReady(a2);
  known.add(a2);
  const code = await a.exited;
  known.delete(a);
  await new Promise((res) => setTimeout(res, 500));
  loading = false;
  await load;
  await Promise.all(inflight);
  polling = false;
  await poller;
  const byA = (answeredBy.get('a') ?? []).filter((at) => at > termAt).length;
  return { sentToStopping, sent, missed, unanswered, code, byA, lameduckMs: exitedAt - termAt, byA2: answeredBy.get('a2')?.length ?? 0 };
}

test('rolling update under load with --lameduck: no query lost, the old replica exits 0', async (t) => {
  const r = await rollingUpdate(t, '2s');
  t.diagnostic(`${r.sent} queries: ${r.missed} misses, ${r.unanswered} unanswered; old replica got ${r.sentToStopping} and answered ${r.byA} after SIGTERM and exited after ${r.lameduckMs} ms; new replica answered ${r.byA2}`);
  assert.equal(r.code, 0);
  assert.ok(r.sent > 200, `${r.sent} queries sent`);
  assert.equal(r.missed, 0, 'not one query had to fail over');
  assert.equal(r.unanswered, 0);
  assert.ok(r.byA2 > 0, 'the new replica took over');
  assert.ok(r.lameduckMs >= 2000, 'the old replica stayed for its lameduck period');
});

test('the same update without a lameduck period loses queries (what the test above guards against)', async (t) => {
  const r = await rollingUpdate(t, '0s');
  t.diagnostic(`--lameduck=0s: ${r.sent} queries, ${r.sentToStopping} sent to the stopping replica, ${r.missed} misses`);
  assert.equal(r.code, 0);
  assert.ok(r.missed > 0, 'queries sent to the stopping replica before the Service noticed were lost');
});
