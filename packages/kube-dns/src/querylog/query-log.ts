// --log-queries=<rate>: one JSON line on stdout per sampled query, for finding who asks what
// (the misconfigured client behind a SERVFAIL storm, the scanner behind cache evictions):
//   {"time":"…","client":"10.244.1.7:41234","transport":"udp","name":"db.shop.svc.cluster.local",
//    "type":"A","rcode":"NOERROR","durationMs":0.061,"cached":true}
//
// Never at the expense of answers:
//   - sampled (rate 0..1), then at most --log-queries-max-rate lines per second: a flood cannot
//     fill the node's disk; what is left out is counted and said on stderr at most once a minute
//     (the count of a flood that ended in between a minute later, and what is left at stop);
//   - written through an asynchronous stream whose buffer is bounded (1 MiB): a stdout nobody
//     reads (a stuck log pipe) drops lines instead of holding queries or growing memory, and
//     once it is read again the lines flow again (a full pipe is a wait, not an error);
//   - any other error of the stream turns the query log off, with one message; answers go on.
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { write } from 'node:fs';
import { Writable } from 'node:stream';
import type { Logger } from '@kube-dns/config';
import type { Transport } from '@kube-dns/dns-client';
import { answeredRcode, qtypeName } from '../server/handler.js';
import { rcodeName, type ParsedQuery } from '../server/wire.js';
const DROP_REPORT_MS = 60_000;

/**
 * A name in presentation form, as dig and CoreDNS's log show it: an octet outside printable ASCII
 * as \DDD. The name string (server/wire.ts) is latin1, one char per octet, with its backslashes
 * and its dots inside a label already written as \\ and \046. The bytes a client sends are its
 * own (a UTF-8 name would read "cafÃ©", a DEL or a NEL would hide in a terminal or split a line in
 * some log readers): the line stays ASCII, and says exactly which bytes were asked.
 */
const UNPRINTABLE = /[^\x21-\x7e]/g;
function presentationName(name: string): string {
  if (name === '') return '.';
  return name.replace(UNPRINTABLE, (c) => `\\${String(c.charCodeAt(0)).padStart(3, '0')}`);
}

/**
 * stdout as the query log writes it: each chunk through fs.write on the thread pool, never
 * blocking the event loop. Node leaves fd 1 non-blocking once anything touched `process.stdout`
 * (a pipe's file description is shared, so the flag is ours too), and a full pipe is then EAGAIN
 * from write(2). fs.WriteStream takes that for an error; here it is a wait: the chunk is tried
 * again after a pause that grows to 100 ms, while record() drops new lines past the bound. When
 * nothing touched it (kube-dns itself does not), fd 1 stays as the container runtime made it,
 * blocking: a write to a full pipe then waits in its thread-pool thread (one write at a time, so
 * one of libuv's four threads), and the bound does the same.
 */
export class StdoutSink extends Writable {
  constructor(private readonly fd = 1) {
    super({ decodeStrings: true });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error | null) => void): void {
    this.attempt(chunk, 0, done, 1);
  }

  private attempt(chunk: Buffer, offset: number, done: (err?: Error | null) => void, pauseMs: number): void {
    write(this.fd, chunk, offset, chunk.length - offset, null, (err, n) => {
      if (err && (err.code === 'EAGAIN' || err.code === 'EWOULDBLOCK')) {
        setTimeout(() => this.attempt(chunk, offset, done, Math.min(pauseMs * 2, 100)), pauseMs).unref();
      } else if (err) {
        done(err);
      } else if (offset + n < chunk.length) {
        this.attempt(chunk, offset + n, done, 1); // a pipe may take part of a large chunk
      } else {
        done();
      }
    });
  }
}

export interface QueryLogOptions {
  /** Share of queries logged, 0..1. */
  rate: number;
  /** Lines per second at most. */
  maxPerSecond: number;
  log: Logger;
  /** Default: stdout (fd 1) through a StdoutSink. */
  out?: Writable;
  /** Bytes waiting in the stream beyond which lines are dropped (default 1 MiB). */
  maxBufferBytes?: number;
  random?: () => number;
}

export class QueryLog {
  private readonly out: Writable;
  private readonly maxBuffer: number;
  private readonly random: () => number;
  private windowStart = 0;
  private inWindow = 0;
  private dropped = 0;
  private lastDropReport = 0;
  /** Reports, a minute after the last report, the drops counted since (a flood that ended). */
  private dropTimer: NodeJS.Timeout | undefined;
  private off = false;
  /** Lines written and sampled queries left out (tests, debugging). */
  written = 0;

  constructor(private readonly opts: QueryLogOptions) {
    this.out = opts.out ?? new StdoutSink();
    this.maxBuffer = opts.maxBufferBytes ?? 1 << 20;
    this.random = opts.random ?? Math.random;
    this.out.on('error', (e: Error) => {
      if (this.off) return;
      this.off = true;
      opts.log.error({ err: e.message }, 'the query log cannot be written: it is off from now on (queries are still answered)');
    });
  }

  /**
   * Called by the handler for every answered query (a sync reply or a promise of one). Cheap when
   * the query is not sampled: one random number.
   */
  record(q: ParsedQuery, transport: Transport, address: string | undefined, port: number | undefined, started: number, reply: Buffer | Promise<Buffer | undefined> | undefined, cached: boolean): void {
    if (this.off || this.random() >= this.opts.rate) return;
    try {
      if (!this.admit()) return;
      if (reply === undefined || Buffer.isBuffer(reply)) {
        this.write(q, transport, address, port, started, reply, cached);
      } else {
        reply.then(
          (r) => this.write(q, transport, address, port, started, r, false),
          () => undefined,
        );
      }
    } catch {
      /* the log is never worth an answer */
    }
  }

  /** The per-second budget; counts and reports what it refuses. */
  private admit(): boolean {
    const now = Date.now();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (this.inWindow >= this.opts.maxPerSecond || (this.out.writableLength ?? 0) > this.maxBuffer) {
      this.dropped++;
      if (now - this.lastDropReport >= DROP_REPORT_MS) this.reportDrops();
      else if (!this.dropTimer) {
        // said later, not when the next one is left out: there may be none
        this.dropTimer = setTimeout(() => this.reportDrops(), this.lastDropReport + DROP_REPORT_MS - now);
        this.dropTimer.unref();
      }
      return false;
    }
    this.inWindow++;
    return true;
  }

  private reportDrops(): void {
    clearTimeout(this.dropTimer);
    this.dropTimer = undefined;
    if (this.dropped === 0) return;
    this.opts.log.warn(
      { notLogged: this.dropped, maxPerSecond: this.opts.maxPerSecond },
      'query log: sampled queries left out (over --log-queries-max-rate, or stdout is not keeping up)',
    );
    this.lastDropReport = Date.now();
    this.dropped = 0;
  }

  /** At stop: says what was left out since the last report. */
  close(): void {
    this.reportDrops();
  }

  private write(q: ParsedQuery, transport: Transport, address: string | undefined, port: number | undefined, started: number, reply: Buffer | undefined, cached: boolean): void {
    if (this.off) return;
    try {
      const line = JSON.stringify({
        time: new Date().toISOString(),
        client: address === undefined ? null : address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`,
        transport,
        name: presentationName(q.name),
        type: qtypeName(q.qtype),
        rcode: reply ? rcodeName(answeredRcode(q, reply)) : 'NOREPLY',
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        cached,
      });
      this.out.write(`${line}\n`);
      this.written++;
    } catch {
      /* see record() */
    }
  }
}
