// The log lines operators' pipelines parse: pino's shape, written by our own logger (log.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createLogger, levelForVerbosity } from '../src/index.js';

function capture(level = 'info') {
  const lines: string[] = [];
  return { log: createLogger('kube-dns', 2, level, (l) => lines.push(l)), lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

test('one JSON line per record: level number, time, component and name, fields, then msg', () => {
  const { log, lines, parsed } = capture();
  const before = Date.now();
  log.info({ server: '10.0.0.53:53', count: 3 }, 'upstream answers again');
  log.warn('no upstream nameservers');
  assert.equal(lines.length, 2);
  assert.ok(lines.every((l) => l.endsWith('}\n') && !l.slice(0, -1).includes('\n')), 'one line each');
  const [a, b] = parsed();
  assert.deepEqual(Object.keys(a!), ['level', 'time', 'component', 'name', 'server', 'count', 'msg']);
  assert.equal(a!.level, 30);
  assert.ok((a!.time as number) >= before && (a!.time as number) <= Date.now());
  assert.deepEqual([a!.component, a!.name, a!.server, a!.count, a!.msg], ['kube-dns', 'kube-dns', '10.0.0.53:53', 3, 'upstream answers again']);
  assert.deepEqual([b!.level, b!.msg], [40, 'no upstream nameservers']);
});

test('an Error is written with its type, message and stack, under err or as the record itself', () => {
  const { log, parsed } = capture();
  class StartupError extends Error {}
  log.fatal({ err: new StartupError('the config directory is missing') }, 'cannot start');
  const e = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  log.error(e);
  const [a, b] = parsed();
  const err = a!.err as Record<string, unknown>;
  assert.equal(a!.level, 60);
  assert.equal(err.type, 'StartupError');
  assert.equal(err.message, 'the config directory is missing');
  assert.match(err.stack as string, /^Error: the config directory is missing\n\s+at /);
  assert.equal(a!.msg, 'cannot start');
  // an Error alone: its message is the record's msg, its own fields (code) are kept
  assert.equal(b!.msg, 'connect ECONNREFUSED');
  assert.equal((b!.err as Record<string, unknown>).code, 'ECONNREFUSED');
});

test('levels: below the threshold nothing is written; --v maps to info, debug, trace', () => {
  const { log, lines, parsed } = capture('warn');
  log.debug('not written');
  log.info({ a: 1 }, 'not written');
  log.error('written');
  assert.equal(lines.length, 1);
  assert.equal(parsed()[0]!.level, 50);
  assert.equal(log.isLevelEnabled('info'), false);
  assert.equal(log.isLevelEnabled('error'), true);
  assert.deepEqual([0, 2, 3, 5, 6].map(levelForVerbosity), ['info', 'info', 'debug', 'debug', 'trace']);
  assert.throws(() => createLogger('x', 2, 'loud'), /unknown log level "loud"/);
});

test('a child adds its fields to every line; cycles, bigints and format arguments stay printable', () => {
  const { log, parsed } = capture();
  const child = log.child({ dnsmasqPid: 42 });
  const loop: Record<string, unknown> = { name: 'a' };
  loop.self = loop;
  const shared = { ip: '10.0.0.1' };
  child.info({ loop, big: 10n ** 20n, one: shared, two: shared }, 'restarted %d times', 3);
  const [r] = parsed();
  assert.equal(r!.dnsmasqPid, 42);
  assert.deepEqual(r!.loop, { name: 'a', self: '[Circular]' });
  assert.equal(r!.big, '100000000000000000000');
  assert.equal(r!.msg, 'restarted 3 times');
});

test('into a non-blocking pipe that fills up, every line arrives whole and in order (nothing dropped on EAGAIN)', async () => {
  // Once anything touches process.stderr, libuv makes fd 2 a non-blocking pipe: 2 MB written into
  // its 64 KB while the reader is another process means EAGAIN (a plain writeSync lost 59 of these
  // 2,000 lines here). The logger waits for the reader instead.
  const logModule = fileURLToPath(new URL('../src/log.js', import.meta.url));
  const script = `import { createLogger } from ${JSON.stringify(logModule)}; process.stderr; const l = createLogger('t'); for (let i = 0; i < 2000; i++) l.info({ i, pad: 'x'.repeat(1000) }, 'line');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += String(d)));
  const [code] = (await once(child, 'close')) as [number];
  assert.equal(code, 0, err.slice(-500));
  const lines = err.trim().split('\n').map((l) => JSON.parse(l) as { i: number });
  assert.deepEqual(lines.map((l) => l.i), Array.from({ length: 2000 }, (_, i) => i));
});

test('LOG_LEVEL sets the level; one that names no level is ignored with a warning, not a crash at start', () => {
  const saved = process.env.LOG_LEVEL;
  try {
    const lines: string[] = [];
    process.env.LOG_LEVEL = 'debug';
    createLogger('kube-dns', 2, undefined, (l) => lines.push(l)).debug('shown');
    assert.equal(lines.length, 1);
    lines.length = 0;
    process.env.LOG_LEVEL = 'verbose';
    const log = createLogger('kube-dns', 2, undefined, (l) => lines.push(l));
    log.info('still logging');
    log.debug('not at --v=2');
    const parsed = lines.map((l) => JSON.parse(l) as { level: number; msg: string; LOG_LEVEL?: string });
    assert.equal(parsed.length, 2);
    assert.equal(parsed[0]!.level, 40);
    assert.equal(parsed[0]!.LOG_LEVEL, 'verbose');
    assert.equal(parsed[1]!.msg, 'still logging');
  } finally {
    if (saved === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = saved;
  }
});

