#!/usr/bin/env node
// Runs bundle/dnsmasq-nanny.cjs, the production build the image ships (see scripts/run-bundle.cjs).
// CommonJS (bin/package.json): no ES module is loaded on the way to the bundle.
require('../../../scripts/run-bundle.cjs').runBundle('dnsmasq-nanny');
