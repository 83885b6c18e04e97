export { buildApp, type AppDeps } from './app';
export { parseApiConfig, ApiConfig } from './config';
export { ClusterFiles } from './cluster-files';
