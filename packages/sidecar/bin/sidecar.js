#!/usr/bin/env node
// Runs bundle/sidecar.mjs, the production build the image ships (see scripts/run-bundle.mjs).
import { runBundle } from '../../../scripts/run-bundle.mjs';

await runBundle('sidecar');
