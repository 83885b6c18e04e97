// @erg/db — Postgres access for erg, closed: every read and write is a named function here (Prisma
// and the pg pool never leave the package), one function per run state transition, and the migrator.
export { createDatabase, type Database, type DatabaseOptions, type Transaction } from './client';
export { migrate, ensureDatabase, dropDatabase, listMigrations, defaultMigrationsDir } from './migrate';
export {
  createApiToken, authenticateToken, reauthenticateTokens, hashToken, listTokens, findToken, revokeToken, roleRank, scopeExcess, scopeOf, ROLES, BOOTSTRAP_ADMIN,
  type ApiTokenRecord, type CreatedToken, type ScopeExcess, type TokenIdentity, type TokenOptions, type TokenRefusal, type TokenScope, type Role,
} from './tokens';
export { findDeactivated, setDeactivated, type Deactivatable } from './deactivation';
export * from './projects';
export * from './clusters';
export * from './carbon-intensity';
export * from './campaigns';
export { readStoredSpec, StoredSpecInvalidError, STORED_SPEC_MIGRATIONS, type StoredSpecMigration } from './stored-spec';
export * from './runs';
export * from './run-reads';
export * from './energy-records';
export { listResultsChanges, readResultsStamp, RESULTS_CHANGES_FOLD_ABOVE, type ResultsChangeRow } from './results-stamp';
export { foldGrownResultsChanges, type ResultsChangesFold } from './results-changes-prune';
export { countedFiguresOf, jsonbOrder, resultMemberOf, type ResultMember } from './counted-figures';
export { IDLE_REFERENCE_RUNS, listIdleReferences } from './idle-references';
export * from './telemetry';
export * from './run-nodes';
export { listRunMarks, listFirstRunMarks, countRunMarks, type RunMarkRecord } from './run-marks';
export { issueRunToken, issueRunTokens, authenticateRunToken, RUN_TOKEN_PREFIX } from './run-tokens';
export * from './suites';
export * from './live-power';
export * from './queue';
export * from './notify';
export * from './audit';
export * from './secrets';
export * from './cluster-lease';
export { checkDatabase } from './readiness';
export { type CampaignRunDataMovementRow, type CampaignRunPhasesRow, listCampaignRunDataMovement, listCampaignRunPhases, listRunMarksUpTo, runMarksSummary } from './run-phases';
export { storeJobMarks, type StoredJobMarks } from './run-marks';
export * from './strategy';
