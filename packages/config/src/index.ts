export * from './configmap.js';
export * from './dir-source.js';
export * from './dns1123.js';
export * from './flags.js';
export * from './log.js';
export * from './nameserver.js';
export * from './resolvconf.js';
