import { CampaignSpec } from '@erg/spec';
import { findCampaignSpec, type Database } from '@erg/db';

/** Campaign specs never change after creation, so each is read and parsed once per process. */
export class SpecCache {
  private readonly specs = new Map<string, CampaignSpec>();

  constructor(private readonly db: Database) {}

  async get(campaignId: string): Promise<CampaignSpec> {
    const cached = this.specs.get(campaignId);
    if (cached) return cached;
    const row = await findCampaignSpec(this.db, campaignId);
    if (!row) throw new Error(`campaign ${campaignId} not found`);
    // Stored specs were validated on the way in; parsing again gives the typed value back.
    const spec = CampaignSpec.parse(row.spec);
    if (this.specs.size > 10_000) this.specs.clear();
    this.specs.set(campaignId, spec);
    return spec;
  }
}
