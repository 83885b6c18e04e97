// @erg/api — erg's REST API (Fastify): what main.ts serves, exported for the tests, the benchmarks
// and scripts/generate-client.js (which builds the app to print its OpenAPI document).
export { buildApp, type AppDeps } from './app';
export { parseApiConfig, ApiConfig } from './config';
export { ClusterFiles } from './cluster-files';
