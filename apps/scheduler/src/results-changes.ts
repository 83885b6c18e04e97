import type { Logger } from 'pino';
import { foldGrownResultsChanges, type Database, type ResultsChangesFold } from '@erg/db';

/**
 * The tick's share of keeping campaign_results_changes small (packages/db
 * results-changes-prune.ts): campaigns' change rows are folded when their results are read, and
 * here for those nobody reads again. At most once per `everyMs`, a bounded fold of the campaigns
 * with the most rows; a pass that folded as many campaigns as it may runs again at the next tick
 * (there may be more), so a backlog is worked off a pass per tick without any one pass growing.
 */
export const RESULTS_CHANGES_PRUNE: ResultsChangesFold & { everyMs: number } = {
  everyMs: 60_000,
  // Well below the read's own fold (RESULTS_CHANGES_FOLD_ABOVE, 256): a campaign still being read
  // is folded by its reads, one that is not keeps at most this many rows.
  above: 64,
  campaigns: 100,
};

export class ResultsChangesPruning {
  private last = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Database,
    private readonly log: Pick<Logger, 'info'>,
    private readonly settings = RESULTS_CHANGES_PRUNE,
    private readonly fold: typeof foldGrownResultsChanges = foldGrownResultsChanges,
  ) {}

  async maybeRun(now = Date.now()): Promise<void> {
    if (now - this.last < this.settings.everyMs) return;
    this.last = now;
    const folded = await this.fold(this.db, { above: this.settings.above, campaigns: this.settings.campaigns });
    if (folded.length >= this.settings.campaigns) this.last = Number.NEGATIVE_INFINITY;
    if (folded.length > 0) this.log.info({ campaigns: folded.length }, 'folded campaigns\' results change rows');
  }
}
