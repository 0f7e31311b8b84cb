#!/usr/bin/env node
// Runs bundle/kube-dns.mjs, the production build the image ships (see scripts/run-bundle.mjs).
import { runBundle } from '../../../scripts/run-bundle.mjs';

await runBundle('kube-dns');
