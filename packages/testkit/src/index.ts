// @erg/testkit — helpers for erg's tests: deadlines, the local cluster, disposable Postgres and Redis, isolated namespaces.
export { waitFor, type WaitForOptions } from './wait-for';
export {
  clusterHostPath, clusterTempDir, hostClusterPath, LOCAL_CLUSTER_SERIES, loadLocalCluster, localClusterFile, localClusterSeries, repoRoot,
  type LocalCluster, type LocalClusterSeries,
} from './local-cluster';
export { uniqueName } from './unique-name';
export { createTestDatabase, testServerUrl, type TestDatabase } from './database';
export { seededRandom } from './seeded-random';
export { closedPort } from './ports';
export { parsePrometheusText, sampleValue, type PromSample } from './prometheus-text';
export { TEST_SECRET_KEY } from './secret-key';
export { startDisposablePostgres, startDisposableRedis, type DisposablePostgres, type DisposableRedis } from './disposable';
export { appAndPackageSources, NON_SOURCE_DIRS, sourceFiles, type SourceScan } from './source-files';
export { makeTestCa, makeTestKey, startTcpRelay, startTestSshd, type SignOptions, type TcpRelay, type TestCa, type TestKey, type TestSshd, type TestSshdOptions } from './test-sshd';
export { allowLoopbackClusters, LOOPBACK_ALLOW_HOSTS } from './cluster-policy';
