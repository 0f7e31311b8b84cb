export * from './app.js';
export * from './options.js';
export * from './records/types.js';
export * from './resolve/types.js';
export { DnsHandler } from './server/handler.js';
export { VERSION } from './version.js';
