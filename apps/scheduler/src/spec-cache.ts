import { CampaignSpec } from '@erg/spec';
import type { Database } from '@erg/db';

/** Campaign specs never change after creation, so each is read and parsed once per process. */
export class SpecCache {
  private readonly specs = new Map<string, CampaignSpec>();

  constructor(private readonly db: Database) {}

  async get(campaignId: string): Promise<CampaignSpec> {
    const cached = this.specs.get(campaignId);
    if (cached) return cached;
    const row = await this.db.prisma.campaign.findUniqueOrThrow({ where: { id: campaignId }, select: { spec: true } });
    // Stored specs were validated on the way in; parsing again gives the typed value back.
    const spec = CampaignSpec.parse(row.spec);
    if (this.specs.size > 10_000) this.specs.clear();
    this.specs.set(campaignId, spec);
    return spec;
  }
}
