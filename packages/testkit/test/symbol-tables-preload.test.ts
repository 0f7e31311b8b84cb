// images/preload/drop-symbol-tables.so, the library the images preload into every process
// (images/Dockerfile: LD_PRELOAD), run with this machine's node: the process works as without
// it, and the pages of node's dynamic symbol tables are no longer in its resident set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dnsmasqPath } from '../src/index.js';

const ROOT = new URL('../../../../', import.meta.url).pathname;
const PRELOAD = join(ROOT, 'images/preload/bundle/drop-symbol-tables.so');
const run = promisify(execFile);

/**
 * A program that uses what the pod's processes use (an HTTP server and client, a UDP socket, a
 * child process, crypto), then prints what it got and, from /proc/self/smaps, the resident KB of
 * the mapping of its binary that holds .dynstr (the read-only segment at the file's start) and
 * of all the binary's mappings (the part of RSS the library changes: the rest, the heap above
 * all, moves by megabytes with the collector's timing when other tests load the machine).
 */
const PROGRAM = `
const http = require('node:http'), dgram = require('node:dgram'), crypto = require('node:crypto'), fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const s = http.createServer((q, r) => r.end(crypto.createHash('sha256').update(q.url).digest('hex'))).listen(0, '127.0.0.1', async () => {
  const bodies = [];
  for (let i = 0; i < 20; i++) bodies.push(await (await fetch('http://127.0.0.1:' + s.address().port + '/' + i)).text());
  const u = dgram.createSocket('udp4');
  await new Promise((r) => u.bind(0, '127.0.0.1', r));
  const echoed = await new Promise((r) => { u.once('message', (m) => r(m.toString())); u.send('ping', u.address().port, '127.0.0.1'); });
  const child = execFileSync(process.execPath, ['-p', '6 * 7']).toString().trim();
  const exe = fs.readlinkSync('/proc/self/exe');
  let name = '', tablesKb, binaryKb = 0;
  for (const l of fs.readFileSync('/proc/self/smaps', 'utf8').split('\\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(l)) name = l;
    else if (l.startsWith('Rss:') && name.endsWith(' ' + exe)) {
      const kb = Number(l.split(/\\s+/)[1]);
      binaryKb += kb;
      if (name.split(/\\s+/)[2] === '00000000') tablesKb ??= kb;
    }
  }
  console.log(JSON.stringify({ work: [bodies.join(','), echoed, child], tablesKb, binaryKb }));
  u.close(); s.close();
});`;

async function runWith(env: Record<string, string>): Promise<{ work: string[]; tablesKb: number; binaryKb: number }> {
  const { stdout, stderr } = await run(process.execPath, ['-e', PROGRAM], { env: { ...process.env, ...env } });
  assert.equal(stderr, '', 'the library writes nothing');
  return JSON.parse(stdout) as { work: string[]; tablesKb: number; binaryKb: number };
}

test('the images\' preload: node works as without it, and its symbol tables leave the resident set', async () => {
  assert.ok(existsSync(PRELOAD), `${PRELOAD} is built by npm run build`);
  assert.match(readFileSync(join(ROOT, 'images/Dockerfile'), 'utf8'), /^ENV LD_PRELOAD=\/usr\/local\/lib\/kube-dns\/drop-symbol-tables\.so$/m, 'the images preload it');
  // alternating, three of each: RSS moves by a few hundred KB between runs of one program
  const kept: Awaited<ReturnType<typeof runWith>>[] = [];
  const dropped: Awaited<ReturnType<typeof runWith>>[] = [];
  for (let i = 0; i < 3; i++) {
    kept.push(await runWith({ LD_PRELOAD: PRELOAD, KUBE_DNS_KEEP_SYMBOL_TABLES: '1' }));
    dropped.push(await runWith({ LD_PRELOAD: PRELOAD }));
  }
  const plain = await runWith({});
  // an operator's "off" for the switch does not keep them
  for (const off of ['0', 'false', '']) {
    const r = await runWith({ LD_PRELOAD: PRELOAD, KUBE_DNS_KEEP_SYMBOL_TABLES: off });
    assert.ok(r.tablesKb < plain.tablesKb / 3, `KUBE_DNS_KEEP_SYMBOL_TABLES=${off}: ${r.tablesKb} of ${plain.tablesKb} KB resident`);
  }
  for (const r of [...kept, ...dropped]) assert.deepEqual(r.work, plain.work, 'the same HTTP, UDP, child process and crypto results');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
  const keptTables = median(kept.map((r) => r.tablesKb));
  const droppedTables = median(dropped.map((r) => r.tablesKb));
  // what the library is for: node's tables are megabytes, and resident after the loader's binding
  assert.ok(plain.tablesKb >= 3000 && keptTables >= 3000, `node's symbol tables resident without the library: ${plain.tablesKb} / ${keptTables} KB`);
  assert.ok(droppedTables < keptTables / 3, `with it: ${droppedTables} KB resident, against ${keptTables} KB`);
  const saved = median(kept.map((r) => r.binaryKb)) - median(dropped.map((r) => r.binaryKb));
  assert.ok(saved > 2000, `the node binary's pages in the process's RSS: ${saved} KB less`);
});

test('the images\' preload: a program bound lazily (sleep) and dnsmasq run as without it', async () => {
  await run('/usr/bin/sleep', ['0.01'], { env: { ...process.env, LD_PRELOAD: PRELOAD } });
  const dnsmasq = dnsmasqPath();
  const withIt = await run(dnsmasq, ['--version'], { env: { ...process.env, LD_PRELOAD: PRELOAD } });
  const without = await run(dnsmasq, ['--version']);
  assert.equal(withIt.stdout, without.stdout);
  assert.equal(withIt.stderr, '');
});
