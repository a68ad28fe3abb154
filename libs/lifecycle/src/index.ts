export { migrateBackend, openServiceDatabase, startBackend, type BackendOptions, type RunningBackend } from './backend';
export { isBundleEntry, runService, type Stoppable } from './run-service';
