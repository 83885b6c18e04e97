#!/usr/bin/env node
// Administrative commands that act on the database directly, for bootstrapping an install:
//   erg-admin create-token NAME    prints a new admin API token (shown once, stored hashed)
//   erg-admin seal-secrets         seals stored secrets still in plaintext (rows from before sealing
//                                  existed) and re-seals those of ERG_SECRET_KEY_PREVIOUS with ERG_SECRET_KEY
import { createApiToken, createDatabase, ensureDatabase, migrate, sealStoredSecrets } from '@erg/db';
import { secretBoxFrom } from '@erg/secrets';
import { reservedPrefixOf } from '@erg/spec';
import { parseApiConfig } from './config';

const USAGE = 'usage: erg-admin create-token NAME | erg-admin seal-secrets';

async function main(): Promise<void> {
  const [command, name] = process.argv.slice(2);
  if (!((command === 'create-token' && name) || (command === 'seal-secrets' && !name))) {
    console.error(USAGE);
    process.exit(2);
  }
  // The same rule as POST /v1/tokens: a token must not pass for a name erg gives itself (suite:<name>).
  const reserved = name === undefined ? null : reservedPrefixOf(name);
  if (reserved !== null) {
    console.error(`erg-admin: token names beginning with "${reserved}" are erg's own (a suite's campaigns are owned by suite:<name>); choose another name`);
    process.exit(2);
  }
  const config = parseApiConfig(process.env);
  await ensureDatabase(config.DATABASE_URL);
  await migrate(config.DATABASE_URL);
  const db = createDatabase(config.DATABASE_URL, { max: 1 });
  try {
    if (command === 'seal-secrets') {
      const secrets = secretBoxFrom(config);
      const sealed = await sealStoredSecrets(db, secrets);
      process.stdout.write(`sealed with key ${secrets.keyId}: ${sealed.clusters} cluster private key(s), ${sealed.suites} webhook secret(s)\n`);
      if (sealed.unreadable.length > 0) {
        console.error(`erg-admin: could not open (left as they are): ${sealed.unreadable.join(', ')}; is ERG_SECRET_KEY_PREVIOUS the key that sealed them?`);
        process.exitCode = 1;
      }
      return;
    }
    if (!name) return; // unreachable: the usage check above
    // A token of the bootstrap admin user (global admin): create users, projects and their tokens through the API with it.
    const { token } = await createApiToken(db, name);
    process.stdout.write(`${token}\n`);
  } finally {
    await db.close();
  }
}

main().catch((err: Error) => {
  console.error(`erg-admin: ${err.message}`);
  process.exit(1);
});
