import { findCampaignPowerContext, listCampaignRunDataMovement, listCampaignRunNodes, listCampaignRunPhases, listConfigurationEnergies, type Database } from '@erg/db';
import { campaignFiguresOf, type CampaignFigureInputs, type CampaignFigureOptions } from './campaign-figures';

/**
 * Everything a campaign's results are computed from (CampaignFigureInputs), read from the
 * database: five queries, whatever the number of runs. The evidence bundle (export) reads the same.
 */
export async function readCampaignFigureInputs(db: Database, campaignId: string): Promise<CampaignFigureInputs> {
  const [rows, runNodes, context, phaseRows, movementRows] = await Promise.all([
    listConfigurationEnergies(db, campaignId),
    listCampaignRunNodes(db, campaignId),
    findCampaignPowerContext(db, campaignId),
    listCampaignRunPhases(db, campaignId),
    listCampaignRunDataMovement(db, campaignId),
  ]);
  return { rows, runNodes, context, phaseRows, movementRows };
}

/** A campaign's results (campaignFiguresOf, campaign-figures.ts) from its stored figures: five queries, whatever the number of runs. */
export async function campaignResultsView(db: Database, campaignId: string, options: CampaignFigureOptions = {}) {
  return campaignFiguresOf(await readCampaignFigureInputs(db, campaignId), options);
}
