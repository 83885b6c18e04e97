// One Jest config, three projects: unit tests need nothing running; integration tests need
// Postgres and Redis; e2e tests need the local Slurm cluster behind sshd as well.
// Tests import workspace packages from their TypeScript sources (no build needed).
const base = {
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'commonjs' } }],
    // A few dependencies ship ESM only; Node 20 loads them with require(esm), Jest's runtime does not.
    '^.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'ecmascript' } }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(content-disposition|cookie|set-cookie-parser|eventsource-parser|hyparquet|hyparquet-writer)/)'],
  moduleNameMapper: {
    '^@erg/(api|scheduler|agent|cli|web)$': '<rootDir>/apps/$1/src/index.ts',
    '^@erg/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    // Subpath exports (package.json "exports"), e.g. @erg/suites/validate for the CLI.
    '^@erg/([a-z-]+)/([a-z-]+)$': '<rootDir>/packages/$1/src/$2.ts',
    // Prisma's generated client imports its siblings as './x.js'; the sources are .ts.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/apps', '<rootDir>/deploy', '<rootDir>/bench', '<rootDir>/scripts'],
};
module.exports = {
  // A deadline for every test and hook that sets none (Jest's default is 5 s). On CI's loaded 2-core
  // machine a database restart, a process stop or a compiled fixture takes seconds; a deadline is
  // not an assertion about speed (none belongs in the suite), so it is generous: a test that hangs
  // still fails, and its own waits (waitFor with deadlines) say what it was waiting for.
  testTimeout: 30_000,
  // The e2e slots run several files at once: the longest first (scripts/e2e-plan.js estimates).
  testSequencer: '<rootDir>/scripts/e2e-sequencer.js',
  projects: [
    { ...base, displayName: 'unit', testMatch: ['**/test/**/*.test.ts'], testPathIgnorePatterns: ['\\.int\\.test\\.ts$', '\\.e2e\\.test\\.ts$', '/node_modules/', '/dist/'] },
    { ...base, displayName: 'integration', testMatch: ['**/test/**/*.int.test.ts'], testPathIgnorePatterns: ['/node_modules/', '/dist/'] },
    { ...base, displayName: 'e2e', testMatch: ['**/test/**/*.e2e.test.ts'], testPathIgnorePatterns: ['/node_modules/', '/dist/'] },
  ],
};
