import { CampaignSpec, ErgError, parseWithIssues, type SpecIssue } from '@erg/spec';

/**
 * The stored campaign spec (campaigns.spec) read back: the one place where that JSON column
 * becomes a `CampaignSpec`. Every @erg/db read that returns a campaign's spec returns it through
 * readStoredSpec, so callers get the typed value and never parse it again.
 *
 * A spec was validated, defaults applied, on its way in (the API's parseCampaignSpec, a suite's
 * trigger); parsing it again gives the same value back. One that no longer parses — a row stored
 * before a schema change — is StoredSpecInvalidError (ERG_STORED_SPEC_INVALID), naming the
 * campaign and every field at fault: never a default in its place (a spec that silently lost its
 * power block or metrics would compute other figures than the campaign asked for).
 *
 * Migrations. A schema change that old rows no longer satisfy gets a migration here, not a
 * fallback where the spec is used: STORED_SPEC_MIGRATIONS is an ordered list of named functions,
 * each applied in turn to the stored JSON before it is parsed, each with a unit test in
 * packages/db/test/stored-spec.test.ts. Stored specs carry no version, so a migration must leave a
 * spec that is already in the newer shape as it is (it runs on every read, new rows included).
 * The rows are not rewritten: the migration is the record of the change. Empty today: every spec
 * erg has stored still parses.
 */

/** One step of the stored specs' history: a name that says what changed, and the rewrite. */
export interface StoredSpecMigration {
  /** What changed and when, e.g. `2027-01 telemetry.interval → telemetry.intervalMs`. */
  readonly name: string;
  /** The stored JSON in the shape before the change → after it; anything else unchanged. */
  readonly migrate: (stored: unknown) => unknown;
}

/** The migrations of stored specs, oldest first (see the header). */
export const STORED_SPEC_MIGRATIONS: readonly StoredSpecMigration[] = [];

/** Fields at fault a message names at most (`issues` holds them all). */
const NAMED_ISSUES = 10;

/** A campaign's stored spec does not parse as a campaign spec, even after the migrations. */
export class StoredSpecInvalidError extends ErgError<'ERG_STORED_SPEC_INVALID'> {
  constructor(
    readonly campaignId: string,
    readonly issues: readonly SpecIssue[],
  ) {
    const named = issues.slice(0, NAMED_ISSUES).map((i) => `${i.path}: ${i.message}`).join('; ');
    const more = issues.length > NAMED_ISSUES ? ` (and ${issues.length - NAMED_ISSUES} more)` : '';
    super(
      'ERG_STORED_SPEC_INVALID',
      `campaign ${campaignId}: its stored spec no longer parses as a campaign spec (${named}${more}); ` +
        'a schema change needs a stored-spec migration (packages/db/src/stored-spec.ts)',
    );
  }
}

/** Campaign `campaignId`'s stored spec, migrated and parsed; throws StoredSpecInvalidError when it does not parse. */
export function readStoredSpec(campaignId: string, stored: unknown, migrations: readonly StoredSpecMigration[] = STORED_SPEC_MIGRATIONS): CampaignSpec {
  const migrated = migrations.reduce((spec, m) => m.migrate(spec), stored);
  const parsed = parseWithIssues(CampaignSpec, migrated);
  if (!parsed.ok) throw new StoredSpecInvalidError(campaignId, parsed.issues);
  return parsed.data;
}
