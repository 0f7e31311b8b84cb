export { Backoff, DEFAULT_BACKOFF, type BackoffOptions } from './backoff.js';
export { realClock, type Clock } from './clock.js';
export { describeError, isGone } from './errors.js';
export { expandEnv, KubeConfigError, loadKubeConfig, parseMasterUrl, type KubeConfigSource } from './kubeconfig.js';
export { listFunction, WATCH_PATHS, type ListFn, type ListPage, type WatchedResource } from './list-api.js';
export { Reflector, type ReflectorHandler, type ReflectorOptions, type ReflectorStats } from './reflector.js';
export { KubeSync, type KubeSyncOptions, type KubeSyncStats } from './sync.js';
