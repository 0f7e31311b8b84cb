// dnsmasq's output reaches the log line by line (the nanny's own splitter, not node:readline): a
// line cut across reads is one line, CRLF is one break, the last line without a newline is not
// lost, and a line with no end in sight is passed on in bounded pieces.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { eachLine } from '../src/dnsmasq-process.js';

function collect(chunks: (string | Buffer)[]): Promise<{ lines: string[]; ended: boolean }> {
  const stream = new PassThrough();
  const lines: string[] = [];
  return new Promise((resolve) => {
    eachLine(stream, (l) => lines.push(l), () => resolve({ lines, ended: true }));
    for (const c of chunks) stream.write(c);
    stream.end();
  });
}

test('lines cut across reads, CRLF and a last line without a newline', async () => {
  const r = await collect(['dnsmasq: started, ver', 'sion 2.90 cachesize 1000\r', '\ndnsmasq: cleared cache\n\n', 'dnsmasq: using nameserver 10.0.0.1#53']);
  assert.deepEqual(r.lines, ['dnsmasq: started, version 2.90 cachesize 1000', 'dnsmasq: cleared cache', '', 'dnsmasq: using nameserver 10.0.0.1#53']);
  assert.equal(r.ended, true);
});

test('a multi-byte character split between two reads stays whole', async () => {
  const bytes = Buffer.from('naïve.example\n');
  const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of ï
  const r = await collect([bytes.subarray(0, cut), bytes.subarray(cut)]);
  assert.deepEqual(r.lines, ['naïve.example']);
});

test('a line that never ends is passed on in pieces of 16 KiB, nothing kept back beyond that', async () => {
  const r = await collect(['x'.repeat(40 * 1024), 'y\n']);
  assert.deepEqual(r.lines.map((l) => l.length), [16384, 16384, 8193]);
  assert.equal(r.lines.join(''), `${'x'.repeat(40 * 1024)}y`);
});
