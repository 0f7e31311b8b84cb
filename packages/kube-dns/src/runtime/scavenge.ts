// Young-generation collections (scavenges) on the event loop's thread alone, without V8's helper
// threads.
//
// V8 splits a scavenge into parallel tasks once the new space is 2 MiB or more (the manifest's
// --max-semi-space-size=2 lets it grow there, and the initial sync does grow it). On a replica
// with a core or two, shared with the kernel's network work and with V8's other background
// threads, the loop then waits for a helper to be scheduled and to finish, with almost nothing
// to copy: a few KB survive each scavenge, the rest is the queries' garbage. Measured with
// --trace-gc-nvp on the bench's mix at 17,000 qps (2 cores, dnsperf on the same machine), 250
// scavenges each: a pause of 0.33 ms on average (the parallel phase 0.107), against 0.195 ms
// (0.041) on the loop's thread alone; the slowest tenth 0.76 against 0.3 ms, the worst 2.7 against
// 0.9. Five alternating runs of 10 s each: the p99 0.49-0.54 against 0.38-0.48 ms, the p99.9
// 1.33-2.86 against 1.0-1.43 ms. Saturated throughput within the runs' spread either way.
//
// Set at run time because Node refuses the flag in NODE_OPTIONS, where the manifest sets the
// others; V8 reads it at every scavenge.
import { setFlagsFromString } from 'node:v8';

export function scavengeOnLoopThread(): void {
  setFlagsFromString('--no-parallel-scavenge');
}
