#!/usr/bin/env node
// V8 flags first, then the program. --optimize-for-size trims ~30 MB of RSS (most of it the
// generated API models @kubernetes/client-node loads) at no measurable cost to the DNS path
// (see scripts/bench.mjs); KUBE_DNS_NODE_FLAGS overrides it ('' to disable).
import v8 from 'node:v8';

const flags = process.env.KUBE_DNS_NODE_FLAGS ?? '--optimize-for-size';
if (flags) v8.setFlagsFromString(flags);
await import('../dist/src/main.js');
