export { backendVars, toBackendConfig, type BackendConfig } from './backend';
export { ConfigError, parseEnv } from './parse-env';
export { commaList, flag, grpcTarget, hostList, logLevel, port, positiveInt, url } from './vars';
