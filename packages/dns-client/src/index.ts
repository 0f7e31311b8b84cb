export * from './exchange.js';
export * from './query.js';
export * from './format.js';
