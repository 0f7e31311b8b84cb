import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { datas, query } from "@kube-dns/dns-client";
import { startDnsmasq, startTestDnsServer, tempDir } from '../src/index.js';

test('a test dnsmasq serves a hosts file and forwards to a test upstream', async (t) => {
  const dir = await tempDir();
  t.after(dir.cleanup);
  const upstream = await startTestDnsServer({ answerIp: '192.0.2.7' });
  t.after(() => upstream.close());
  await writeFile(join(dir.path, 'hosts'), '192.0.2.123 my.test\n');
  const dm = await startDnsmasq([`--addn-hosts=${join(dir.path, 'hosts')}`, `--server=127.0.0.1#${upstream.port}`]);
  t.after(() => dm.stop());

  const local = await query({ host: dm.host, port: dm.port }, { name: 'my.test', type: 'A' });
  assert.deepEqual(datas(local.packet.answers), ['192.0.2.123']);
  const fwd = await query({ host: dm.host, port: dm.port }, { name: 'far.example', type: 'A', transport: 'tcp' });
  assert.deepEqual(datas(fwd.packet.answers), ['192.0.2.7']);
  assert.equal(upstream.questions.at(-1)?.name, 'far.example');
});
