import type { CampaignSpec } from '@erg/spec';
import { findCampaignSpec, type Database } from '@erg/db';

/**
 * Campaign specs never change after creation, so each is read once per process. @erg/db returns
 * it typed (readStoredSpec): a stored spec that no longer parses throws ERG_STORED_SPEC_INVALID,
 * naming the campaign, and is not cached.
 */
export class SpecCache {
  private readonly specs = new Map<string, CampaignSpec>();

  constructor(private readonly db: Database) {}

  async get(campaignId: string): Promise<CampaignSpec> {
    const cached = this.specs.get(campaignId);
    if (cached) return cached;
    const spec = await findCampaignSpec(this.db, campaignId);
    if (!spec) throw new Error(`campaign ${campaignId} not found`);
    if (this.specs.size > 10_000) this.specs.clear();
    this.specs.set(campaignId, spec);
    return spec;
  }
}
