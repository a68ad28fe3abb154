export { describeBackends, testBackends, type BackendSource, type TestBackends } from './backends';
export { createTestDatabase, type TestDatabase } from './database';
export { jsonOf } from './http';
export { freePort } from './ports';
