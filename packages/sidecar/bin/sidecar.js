#!/usr/bin/env node
// Runs bundle/sidecar.cjs, the production build the image ships (see scripts/run-bundle.cjs).
// CommonJS (bin/package.json): no ES module is loaded on the way to the bundle.
require('../../../scripts/run-bundle.cjs').runBundle('sidecar');
