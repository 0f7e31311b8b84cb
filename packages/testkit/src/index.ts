export * from './dns-server.js';
export * from './dnsmasq.js';
export * from './ports.js';
export * from './fake-apiserver/index.js';
export * from './fixtures.js';
export * from './bind-pair.js';
export * from './named.js';
export * from './load-report.js';
