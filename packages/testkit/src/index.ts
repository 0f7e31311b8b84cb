export * from './dns-server.js';
export * from './dnsmasq.js';
export * from './ports.js';
