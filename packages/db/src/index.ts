export { createDatabase, type Database, type DatabaseOptions } from './client';
export { migrate, ensureDatabase, listMigrations, defaultMigrationsDir } from './migrate';
export { createApiToken, authenticateToken, hashToken, type CreatedToken, type TokenIdentity } from './tokens';
export * from './clusters';
export * from './campaigns';
export * from './runs';
export { Prisma } from './generated/client';
export type { Run, Configuration, Campaign, RunEvent, ApiToken } from './generated/client';
