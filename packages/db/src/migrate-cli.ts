#!/usr/bin/env node
// `erg-migrate [DATABASE_URL]`: creates the database if needed and applies pending migrations.
import { ensureDatabase, migrate } from './migrate';

async function main(): Promise<void> {
  const url = process.argv[2] ?? process.env.DATABASE_URL;
  if (!url) {
    console.error('usage: erg-migrate DATABASE_URL (or set DATABASE_URL)');
    process.exit(2);
  }
  await ensureDatabase(url);
  const applied = await migrate(url);
  console.log(applied.length ? `applied ${applied.join(', ')}` : 'database is up to date');
}

main().catch((err: Error) => {
  console.error(`migration failed: ${err.message}`);
  process.exit(1);
});
