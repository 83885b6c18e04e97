// @erg/testkit — helpers for erg's tests: deadlines, the local cluster, disposable Postgres and Redis, isolated namespaces.
export { waitFor, type WaitForOptions } from './wait-for';
export { loadLocalCluster, repoRoot, type LocalCluster } from './local-cluster';
export { uniqueName } from './unique-name';
export { createTestDatabase, testServerUrl, type TestDatabase } from './database';
export { seededRandom } from './seeded-random';
export { closedPort } from './ports';
export { parsePrometheusText, sampleValue, type PromSample } from './prometheus-text';
export { TEST_SECRET_KEY } from './secret-key';
export { startDisposablePostgres, startDisposableRedis, type DisposablePostgres, type DisposableRedis } from './disposable';
export { appAndPackageSources, NON_SOURCE_DIRS, sourceFiles, type SourceScan } from './source-files';
