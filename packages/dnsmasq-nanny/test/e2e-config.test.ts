// The real nanny + real dnsmasq: ConfigMap → routing and hosts, applied live.
import assert from 'node:assert/strict';
import { mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestDnsServer, tempDir, type TestDnsServer } from '@kube-dns/testkit';
import { eventually, lookupA as lookupAraw, startNanny } from './nanny-harness.js';

async function lookupA(port: number, name: string) {
  try {
    return await lookupAraw(port, name);
  } catch (e) {
    throw new Error(`${name}: ${(e as Error).message}`);
  }
}

/**
 * The first lookup after a change: the nanny logs "servers updated" when it has sent SIGHUP, and
 * dnsmasq handles the signal a moment later (longer on a loaded machine); a forward made in
 * between can go to a server the reload removes, and dnsmasq then drops it. Ask as a resolver
 * would (1 s tries) until the change has settled, then expect exactly `want`.
 */
async function settledLookupA(port: number, name: string, want: string[]): Promise<void> {
  let last = '';
  await eventually(
    async () => {
      last = (await lookupAraw(port, name, 1000)).ips.join(',');
      return last === want.join(',');
    },
    5000,
    `${name} answered by ${want.join(',')}`,
  );
}

async function server(t: { after: (fn: () => unknown) => void }, answerIp: string): Promise<TestDnsServer> {
  const s = await startTestDnsServer({ answerIp });
  t.after(() => s.close());
  return s;
}

test('stub domains and upstreams route each query to its configured server, and --server flags survive reloads', async (t) => {
  const stub = await server(t, '10.0.0.1');
  const upstream = await server(t, '10.0.0.2');
  const cluster = await server(t, '10.0.0.3');
  const nanny = await startNanny(t, {
    config: {
      stubDomains: JSON.stringify({ 'acme.local': [`127.0.0.1:${stub.port}`] }),
      upstreamNameservers: JSON.stringify([`127.0.0.1:${upstream.port}`]),
    },
    dnsmasqArgs: [`--server=/cluster.local/127.0.0.1#${cluster.port}`],
    flags: ['-reloadGracePeriod=500ms'],
  });

  assert.deepEqual((await lookupA(nanny.port, 'www.acme.local')).ips, ['10.0.0.1']);
  assert.deepEqual((await lookupA(nanny.port, 'example.org')).ips, ['10.0.0.2']);
  assert.deepEqual((await lookupA(nanny.port, 'kubernetes.default.svc.cluster.local')).ips, ['10.0.0.3']);
  assert.equal(stub.questions.filter((q) => q.name === 'www.acme.local').length, 1);
  assert.ok(!upstream.questions.some((q) => q.name.endsWith('acme.local')), 'stub names never reach the upstream');

  // Move the stub domain to another server and add a second stub domain.
  const stub2 = await server(t, '10.0.0.4');
  const pid = nanny.dnsmasqPid();
  const mark = nanny.logs.length;
  await nanny.setKey('stubDomains', JSON.stringify({ 'acme.local': [`127.0.0.1:${stub2.port}`], 'other.local': [`127.0.0.1:${stub.port}`] }));
  await nanny.waitForLog((l) => l.msg === 'dnsmasq servers updated' && JSON.stringify(l.servers).includes(`#${stub2.port}`), 8000, mark);
  // both SIGHUPs (old ∪ new, then new only) confirmed by dnsmasq itself: from here on every
  // query sees exactly the new servers
  await eventually(() => nanny.logs.slice(mark).filter((l) => l.msg === 'dnsmasq applied the reload').length >= 2, 30_000, 'dnsmasq confirmed both reloads');
  assert.deepEqual((await lookupA(nanny.port, 'x1.acme.local')).ips, ['10.0.0.4']);
  assert.deepEqual((await lookupA(nanny.port, 'x1.other.local')).ips, ['10.0.0.1']);
  assert.deepEqual((await lookupA(nanny.port, 'x1.cluster.local')).ips, ['10.0.0.3'], 'the command line --server is still in force after SIGHUP');
  assert.deepEqual((await lookupA(nanny.port, 'x2.example.org')).ips, ['10.0.0.2']);
  assert.equal(nanny.dnsmasqPid(), pid, 'no restart');
  const file = await readFile(join(nanny.stateDir, 'servers'), 'utf8');
  assert.deepEqual(
    file.split('\n').filter((l) => l.startsWith('server=')),
    [`server=/acme.local/127.0.0.1#${stub2.port}`, `server=/other.local/127.0.0.1#${stub.port}`, `server=127.0.0.1#${upstream.port}`],
  );
});

test('the cluster domain as a stub domain is ignored with a warning: its names keep going to kube-dns alone', async (t) => {
  const kubedns = await server(t, '10.96.0.1');
  const stub = await server(t, '6.6.6.6');
  const corp = await server(t, '10.0.0.7');
  const nanny = await startNanny(t, {
    config: { stubDomains: JSON.stringify({ 'Cluster.Local.': [`127.0.0.1:${stub.port}`], 'corp.cluster.local': [`127.0.0.1:${corp.port}`] }) },
    dnsmasqArgs: [`--server=/cluster.local/127.0.0.1#${kubedns.port}`],
  });
  const warned = await nanny.waitForLog((l) => /is the cluster domain: ignored/.test(l.msg), 10_000);
  assert.equal(warned.domain, 'cluster.local');
  const lines = (await readFile(join(nanny.stateDir, 'servers'), 'utf8')).split('\n').filter((l) => l.startsWith('server=/'));
  assert.deepEqual(lines, [`server=/corp.cluster.local/127.0.0.1#${corp.port}`], 'a stub inside the zone stays (the longest match takes its names)');
  for (let i = 0; i < 10; i++) assert.deepEqual((await lookupA(nanny.port, `svc${i}.default.svc.cluster.local`)).ips, ['10.96.0.1']);
  assert.deepEqual((await lookupA(nanny.port, 'db.corp.cluster.local')).ips, ['10.0.0.7']);
  assert.equal(stub.questions.length, 0, 'the ignored stub is never asked');
});

test('the operator\'s --no-resolv keeps the resolv.conf nameservers out: only their --server lines are asked', async (t) => {
  const operators = await server(t, '10.0.0.5');
  const tmp = await tempDir('nanny-resolv-');
  t.after(() => tmp.cleanup());
  const resolvConf = join(tmp.path, 'resolv.conf');
  await writeFile(resolvConf, 'nameserver 127.0.0.2\n');
  const nanny = await startNanny(t, { dnsmasqArgs: ['--no-resolv', `--resolv-file=${resolvConf}`, `--server=127.0.0.1#${operators.port}`] });
  assert.deepEqual((await lookupA(nanny.port, 'www.example.org')).ips, ['10.0.0.5']);
  const lines = (await readFile(join(nanny.stateDir, 'servers'), 'utf8')).split('\n').filter((l) => l.startsWith('server='));
  assert.deepEqual(lines, [], 'no upstream taken from the resolv.conf dnsmasq was told not to use');
});

test('an invalid config is reported with its key and leaves the running dnsmasq and its routing untouched', async (t) => {
  const stub = await server(t, '10.0.1.1');
  const nanny = await startNanny(t, { config: { stubDomains: JSON.stringify({ 'acme.local': [`127.0.0.1:${stub.port}`] }) } });
  const pid = nanny.dnsmasqPid();
  const before = await readFile(join(nanny.stateDir, 'servers'), 'utf8');

  let mark = nanny.logs.length;
  await nanny.setKey('stubDomains', '{"acme.local": ["127.0.0.1:99999"]');
  const bad = await nanny.waitForLog((l) => /Invalid configuration/.test(l.msg), 30_000, mark);
  assert.match(bad.msg, /stubDomains: invalid JSON/);

  mark = nanny.logs.length;
  await nanny.setKey('stubDomains', '{}');
  await nanny.setKey('upstreamNameservers', '["1.1.1.1", "8.8.8.8", "9.9.9.9", "1.0.0.1"]');
  const tooMany = await nanny.waitForLog((l) => /Invalid configuration/.test(l.msg) && /upstreamNameservers/.test(l.msg), 30_000, mark);
  assert.match(tooMany.msg, /upstreamNameservers: 4 servers given, at most 3/);

  mark = nanny.logs.length;
  await nanny.setKey('upstreamNameservers', '["300.1.1.1"]');
  const badIp = await nanny.waitForLog((l) => /Invalid configuration/.test(l.msg) && /300\.1\.1\.1/.test(l.msg), 30_000, mark);
  assert.match(badIp.msg, /upstreamNameservers: "300\.1\.1\.1" is not an IP address/);

  assert.equal(await readFile(join(nanny.stateDir, 'servers'), 'utf8'), before, 'servers file unchanged');
  assert.ok(!nanny.logs.some((l) => l.msg === 'dnsmasq servers updated'), 'no reload');
  assert.equal(nanny.dnsmasqPid(), pid);
  assert.deepEqual((await lookupA(nanny.port, 'still.acme.local')).ips, ['10.0.1.1']);
});

test('a hosts edit in the ConfigMap is served by the same dnsmasq process, without a restart', async (t) => {
  const nanny = await startNanny(t, { config: { hosts: '192.0.2.10 db.corp.example\n' } });
  assert.deepEqual((await lookupA(nanny.port, 'db.corp.example')).ips, ['192.0.2.10']);
  const pid = nanny.dnsmasqPid();

  await nanny.setKey('hosts', '# moved\n192.0.2.11 db.corp.example db\n192.0.2.20 cache.corp.example\n');
  const ms = await eventually(async () => (await lookupA(nanny.port, 'db.corp.example')).ips.join() === '192.0.2.11', 30_000, 'hosts edit served');
  t.diagnostic(`the edit was served after ${ms} ms (how fast is the bench's business)`);
  assert.deepEqual((await lookupA(nanny.port, 'cache.corp.example')).ips, ['192.0.2.20']);

  await nanny.setKey('hosts', '192.0.2.20 cache.corp.example\n');
  await eventually(async () => (await lookupA(nanny.port, 'db.corp.example')).ips.length === 0, 30_000, 'removed host no longer served');
  assert.equal(nanny.dnsmasqPid(), pid, 'no new dnsmasq process');
  assert.equal(nanny.logs.filter((l) => l.msg === 'dnsmasq restarted').length, 0);
});

test('a hosts edit for a name dnsmasq has cached from upstream: the hosts address alone, at once, not both until the TTL runs out', async (t) => {
  const upstream = await server(t, '10.0.0.1'); // TTL 60
  const nanny = await startNanny(t, { config: { upstreamNameservers: JSON.stringify([`127.0.0.1:${upstream.port}`]), hosts: '192.0.2.1 other.corp\n' } });
  assert.deepEqual((await lookupA(nanny.port, 'db.corp')).ips, ['10.0.0.1']);
  assert.deepEqual((await lookupA(nanny.port, 'db.corp')).ips, ['10.0.0.1']);
  assert.equal(upstream.questions.filter((q) => q.name === 'db.corp').length, 1, 'the second answer came from the cache');
  const pid = nanny.dnsmasqPid();
  await nanny.setKey('hosts', '192.0.2.1 other.corp\n192.0.2.7 db.corp\n');
  await eventually(async () => (await lookupA(nanny.port, 'db.corp')).ips.join() === '192.0.2.7', 10_000, 'the hosts address alone', 100);
  assert.equal(nanny.dnsmasqPid(), pid, 'the same dnsmasq');
  // a removal needs no signal: the name goes back upstream
  await nanny.setKey('hosts', '192.0.2.1 other.corp\n');
  await eventually(async () => (await lookupA(nanny.port, 'db.corp')).ips.join() === '10.0.0.1', 10_000, 'upstream again', 100);
  assert.deepEqual((await lookupA(nanny.port, 'other.corp')).ips, ['192.0.2.1']);
});

// 30,000 names one a line, or 79,600 in 1,990 lines of 40: dnsmasq's re-read of a --hostsdir file
// costs the square of its names, not of its lines (while the nanny counted lines, this second key
// went to the hostsdir and stalled dnsmasq 5 s; 1,990 lines of 60 stalled it past the liveness probe)
for (const { lines, perLine } of [{ lines: 30_000, perLine: 1 }, { lines: 1_990, perLine: 40 }]) {
  test(`a hosts key of ${lines.toLocaleString('en')} lines of ${perLine} name${perLine > 1 ? 's' : ''} is served without stalling dnsmasq; cut back to a few, the rest go`, async (t) => {
    const nanny = await startNanny(t, { config: { hosts: '192.0.2.10 db.corp.example\n' } });
    const pid = nanny.dnsmasqPid();
    // a client asking all along: the longest time dnsmasq left it without an answer
    let stop = false;
    let longest = 0;
    const asking = (async () => {
      let last = Date.now();
      while (!stop) {
        const ok = await lookupAraw(nanny.port, 'db.corp.example', 3000).then(() => true, () => false);
        const now = Date.now();
        if (ok) {
          longest = Math.max(longest, now - last);
          last = now;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const ip = (i: number) => `10.${(i >> 16) + 1}.${(i >> 8) & 255}.${i & 255}`;
    const many = Array.from({ length: lines }, (_, i) => `${ip(i)} ${Array.from({ length: perLine }, (_, j) => `h${i}-${j}.bulk.example`).join(' ')}`);
    await nanny.setKey('hosts', ['192.0.2.10 db.corp.example', ...many].join('\n') + '\n');
    const lastName = `h${lines - 1}-${perLine - 1}.bulk.example`;
    await eventually(async () => (await lookupA(nanny.port, lastName)).ips.join() === ip(lines - 1), 15_000, 'the last name served');
    await new Promise((r) => setTimeout(r, 500));
    stop = true;
    await asking;
    // dnsmasq's inotify re-read of a hostsdir file of that size stalled it for ~5 s
    assert.ok(longest < 1500, `dnsmasq left a client without an answer for ${longest} ms`);
    assert.equal(nanny.dnsmasqPid(), pid, 'not restarted (the liveness probe did not find it hung)');

    await nanny.setKey('hosts', '192.0.2.11 db.corp.example\n');
    await eventually(async () => (await lookupA(nanny.port, 'db.corp.example')).ips.join() === '192.0.2.11', 15_000, 'the few served again');
    await eventually(async () => (await lookupA(nanny.port, 'h5-0.bulk.example')).ips.length === 0, 15_000, 'the many gone');
  });
}

test('a hosts edit that could not be written (state volume trouble) is written by the next refresh', async (t) => {
  const nanny = await startNanny(t, { config: { hosts: '192.0.2.10 db.corp.example\n' } });
  assert.deepEqual((await lookupA(nanny.port, 'db.corp.example')).ips, ['192.0.2.10']);
  // the hosts directory is out of reach for a while (ENOSPC, EIO on the emptyDir behave alike)
  const dir = join(nanny.stateDir, 'hosts.d');
  await rename(dir, `${dir}.away`);
  const mark = nanny.logs.length;
  await nanny.setKey('hosts', '192.0.2.11 db.corp.example\n');
  await nanny.waitForLog((l) => /cannot apply the configuration to dnsmasq/.test(l.msg), 10_000, mark);
  await rename(`${dir}.away`, dir);
  // the refresh (-syncInterval=500ms here) writes it: not only the servers
  await eventually(async () => (await lookupA(nanny.port, 'db.corp.example')).ips.join() === '192.0.2.11', 15_000, 'the edit served after the directory came back', 100, () => nanny.tail());
});

test('operator --addn-hosts files are re-read within seconds of an edit', async (t) => {
  const tmp = await tempDir('nanny-addn-');
  t.after(() => tmp.cleanup());
  const hostsFile = join(tmp.path, 'extra.hosts');
  await writeFile(hostsFile, '198.51.100.1 printer.corp.example\n');
  const nanny = await startNanny(t, { dnsmasqArgs: [`--addn-hosts=${hostsFile}`] });
  assert.deepEqual((await lookupA(nanny.port, 'printer.corp.example')).ips, ['198.51.100.1']);
  const pid = nanny.dnsmasqPid();
  await writeFile(hostsFile, '198.51.100.2 printer.corp.example\n');
  await eventually(async () => (await lookupA(nanny.port, 'printer.corp.example')).ips.join() === '198.51.100.2', 30_000, 'addn-hosts edit served', 50, nanny.tail);
  assert.equal(nanny.dnsmasqPid(), pid);
});

test('an operator --hostsdir that is a ConfigMap volume: an update (the kubelet\'s ..data swap) is served within seconds', async (t) => {
  const tmp = await tempDir('nanny-hostsdir-');
  t.after(() => tmp.cleanup());
  // the kubelet's layout: hosts -> ..data/hosts, ..data -> a hidden timestamped directory; an
  // update writes a new one, swaps ..data to it and removes the old one
  const volume = join(tmp.path, 'volume');
  const publish = async (generation: number, text: string) => {
    await mkdir(join(volume, `..${generation}`), { recursive: true });
    await writeFile(join(volume, `..${generation}`, 'hosts'), text);
    await symlink(`..${generation}`, join(volume, '..data_tmp'));
    await rename(join(volume, '..data_tmp'), join(volume, '..data'));
    if (generation > 1) await rm(join(volume, `..${generation - 1}`), { recursive: true });
  };
  await publish(1, '198.51.100.1 printer.corp.example\n');
  await symlink(join('..data', 'hosts'), join(volume, 'hosts'));
  const nanny = await startNanny(t, { dnsmasqArgs: [`--hostsdir=${volume}`], flags: ['-syncInterval=60s'] });
  assert.deepEqual((await lookupA(nanny.port, 'printer.corp.example')).ips, ['198.51.100.1']);
  const pid = nanny.dnsmasqPid();
  await publish(2, '198.51.100.2 printer.corp.example\n');
  await eventually(async () => (await lookupA(nanny.port, 'printer.corp.example')).ips.join() === '198.51.100.2', 10_000, 'the update served', 50, nanny.tail);
  assert.equal(nanny.dnsmasqPid(), pid);
});

test('with -restartDnsmasq=false a change is logged and not applied', async (t) => {
  const a = await server(t, '10.0.2.1');
  const b = await server(t, '10.0.2.2');
  const nanny = await startNanny(t, {
    config: { stubDomains: JSON.stringify({ 'acme.local': [`127.0.0.1:${a.port}`] }) },
    flags: ['-restartDnsmasq=false'],
  });
  const mark = nanny.logs.length;
  await nanny.setKey('stubDomains', JSON.stringify({ 'acme.local': [`127.0.0.1:${b.port}`] }));
  await nanny.waitForLog((l) => /Not applying the new configuration/.test(l.msg), 30_000, mark);
  assert.deepEqual((await lookupA(nanny.port, 'y.acme.local')).ips, ['10.0.2.1']);
});

test('a stub server named by a cluster name is resolved through kube-dns, and picked up once kube-dns knows it', async (t) => {
  const stub = await server(t, '10.0.3.1');
  let known = false;
  const kubedns = await startTestDnsServer({
    handler: (q) =>
      known && q.name === 'stub-dns.infra.svc.cluster.local' && q.type === 'A'
        ? { answers: [{ name: q.name, type: 'A', ttl: 30, data: '127.0.0.1' }] }
        : { rcode: 'NXDOMAIN' },
  });
  t.after(() => kubedns.close());
  const nanny = await startNanny(t, {
    config: { stubDomains: JSON.stringify({ 'corp.example': [`stub-dns.infra.svc.cluster.local:${stub.port}`] }) },
    flags: [`-kubednsServer=127.0.0.1:${kubedns.port}`],
  });
  // kube-dns has not synced yet (a pod starting): reported, and no unusable line written.
  const warn = await nanny.waitForLog((l) => /Error looking up IP for name stub-dns\.infra\.svc\.cluster\.local/.test(l.msg));
  assert.equal(warn.domain, 'corp.example');
  assert.doesNotMatch(await readFile(join(nanny.stateDir, 'servers'), 'utf8'), /corp\.example/);

  known = true;
  const mark = nanny.logs.length;
  await nanny.waitForLog((l) => l.msg === 'dnsmasq servers updated' && JSON.stringify(l.servers).includes('corp.example'), 30_000, mark);
  await settledLookupA(nanny.port, 'www.corp.example', ['10.0.3.1']);
  assert.ok(kubedns.questions.some((q) => q.name === 'stub-dns.infra.svc.cluster.local'));
});

test('kube-dns not answering for a while: a stub server name keeps its last address, the domain\'s names never go upstream', async (t) => {
  const stub = await server(t, '10.0.3.1');
  const upstream = await server(t, '10.0.3.9');
  let silent = false;
  const kubedns = await startTestDnsServer({
    handler: (q) =>
      silent ? 'drop' : q.name === 'stub-dns.infra.svc.cluster.local' && q.type === 'A' ? { answers: [{ name: q.name, type: 'A', ttl: 30, data: '127.0.0.1' }] } : { rcode: 'NXDOMAIN' },
  });
  t.after(() => kubedns.close());
  const nanny = await startNanny(t, {
    config: {
      stubDomains: JSON.stringify({ 'corp.example': [`stub-dns.infra.svc.cluster.local:${stub.port}`] }),
      upstreamNameservers: JSON.stringify([`127.0.0.1:${upstream.port}`]),
    },
    flags: [`-kubednsServer=127.0.0.1:${kubedns.port}`, '-reloadGracePeriod=0s'],
  });
  assert.deepEqual((await lookupA(nanny.port, 'www.corp.example')).ips, ['10.0.3.1']);

  // kube-dns restarting in the same pod: the periodic refresh (500 ms here) gets no answer
  silent = true;
  const mark = nanny.logs.length;
  const failed = (l: { msg: string }) => /Error looking up IP for name stub-dns\.infra\.svc\.cluster\.local/.test(l.msg);
  const first = await nanny.waitForLog(failed, 15_000, mark);
  // a second failed refresh, the first one applied by now
  await nanny.waitForLog(failed, 15_000, nanny.logs.indexOf(first) + 1);
  assert.match(await readFile(join(nanny.stateDir, 'servers'), 'utf8'), new RegExp(`server=/corp\\.example/127\\.0\\.0\\.1#${stub.port}`));
  assert.deepEqual((await lookupA(nanny.port, 'mail.corp.example')).ips, ['10.0.3.1']);
  assert.ok(!upstream.questions.some((q) => q.name.endsWith('corp.example')), 'no stub domain name reached the upstream');
  assert.match(first.msg, /keeps its last address 127\.0\.0\.1/);
});

test('-logInterval makes dnsmasq log its cache statistics periodically', async (t) => {
  const nanny = await startNanny(t, { flags: ['-logInterval=200ms'] });
  const line = await nanny.waitForLog((l) => /cache size \d+/.test(l.msg) && l.dnsmasqPid === nanny.dnsmasqPid(), 30_000);
  assert.equal(line.stream, 'stderr');
});
