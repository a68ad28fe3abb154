export { collect, waitReady, type Child } from './children';
export { describeBackends, testBackends, type BackendSource, type TestBackends } from './backends';
export { createTestDatabase, type TestDatabase } from './database';
export { createApiClient, jsonOf, type ApiAnswer, type ApiClient } from './http';
export { createContractChecker, type ContractChecker } from './openapi-contract';
export { freePort } from './ports';
export { rejectionOf } from './rejections';
export { startTcpProxy, type TcpProxy } from './tcp-proxy';
