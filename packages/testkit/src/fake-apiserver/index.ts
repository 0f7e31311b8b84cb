export { APISERVER_BOOKMARK_INTERVAL_MS, startFakeApiServer } from './server.js';
export type { FakeApiServer, FakeApiServerFaults, FakeApiServerOptions, FailureFilter, RecordedRequest } from './server.js';
export { collectionPath, RESOURCES, type ResourceName } from './resources.js';
export type { KubeObject } from './store.js';
export type { KubeStatus } from './status.js';
