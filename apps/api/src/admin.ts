#!/usr/bin/env node
// Administrative commands that act on the database directly, for bootstrapping an install:
//   erg-admin create-token NAME    prints a new admin API token (shown once, stored hashed)
import { createApiToken, createDatabase, ensureDatabase, migrate } from '@erg/db';
import { parseApiConfig } from './config';

async function main(): Promise<void> {
  const [command, name] = process.argv.slice(2);
  if (command !== 'create-token' || !name) {
    console.error('usage: erg-admin create-token NAME');
    process.exit(2);
  }
  const config = parseApiConfig(process.env);
  await ensureDatabase(config.DATABASE_URL);
  await migrate(config.DATABASE_URL);
  const db = createDatabase(config.DATABASE_URL, { max: 1 });
  try {
    const { token } = await createApiToken(db, name, 'admin');
    process.stdout.write(`${token}\n`);
  } finally {
    await db.close();
  }
}

main().catch((err: Error) => {
  console.error(`erg-admin: ${err.message}`);
  process.exit(1);
});
