import {
  configurationEnergyRows, findCampaignPowerContext, listCampaignConfigurationRows, listCampaignRunDataMovement, listCampaignRunNodes,
  listCampaignRunPhases, listCompletedRunFigures, listResultsChanges, type CompletedRunFigures, type ConfigurationEnergyRow, type ConfigurationRecord,
  type Database, type ResultsChangeRow, type RunNodeRecord,
} from '@erg/db';
import type { CampaignFigureInputs } from './campaign-figures';

/**
 * Campaigns' results inputs (CampaignFigureInputs) kept between reads, so that a read after a few
 * runs changed reads those runs and not the whole campaign: reading 100,000 runs' figures takes
 * 1–2 s, reading the one run that changed a few milliseconds (issue 27: results of 100,000 runs
 * in ≤ 200 ms). The results worker holds one (apps/api results-worker.ts).
 *
 * Glossary
 * - change rows: the campaign's rows in campaign_results_changes, one per change to what its
 *   results read, naming the run (migration 20261211020000), added by triggers in the writer's
 *   transaction; readResultsStamp folds them into one row holding their sum (no run) as they grow.
 * - seen / accounted: the change rows a kept snapshot has seen, and the sum of the changes it
 *   reflects. A read lists the rows again (listResultsChanges): the unseen ones that name a run
 *   say which runs to read again. When `accounted` plus their changes is the sum of every row,
 *   every change is accounted for — a folded row then only merges rows the snapshot had seen. When
 *   it is not (a fold took rows it had not seen), or more runs changed than reading them one by one
 *   is worth, or the configurations changed, the campaign is read whole.
 * The change rows are read before the runs they name, each in a snapshot of its own: the runs read
 * are at least as new as the rows, and a change committed in between is read again next time.
 * What is kept is bounded by `maxRuns` over all campaigns, the least recently read dropped first.
 */
export class CampaignInputsKeeper {
  /** In order of last read, oldest first. */
  private readonly kept = new Map<string, KeptInputs>();

  constructor(private readonly maxRuns = 250_000) {}

  /** The campaign's inputs as readCampaignFigureInputs reads them; `read` says whether they were read whole or only the runs that changed. */
  async read(db: Database, campaignId: string): Promise<{ inputs: CampaignFigureInputs; read: 'whole' | 'changes'; runsRead: number }> {
    const changes = await listResultsChanges(db, campaignId);
    const previous = this.kept.get(campaignId);
    this.kept.delete(campaignId);
    const changed = previous?.changedRuns(changes.rows, changes.configurations) ?? null;
    let kept: KeptInputs;
    let read: 'whole' | 'changes';
    if (previous && changed !== null && changed.length <= Math.max(DELTA_FLOOR, previous.runCount * DELTA_SHARE)) {
      await previous.readRuns(db, campaignId, changed);
      kept = previous;
      read = 'changes';
    } else {
      kept = await KeptInputs.readWhole(db, campaignId, changes.configurations);
      read = 'whole';
    }
    kept.saw(changes.rows);
    const inputs = kept.inputs();
    if (kept.runCount <= this.maxRuns) this.keep(campaignId, kept);
    return { inputs, read, runsRead: read === 'whole' ? kept.runCount : changed!.length };
  }

  private keep(campaignId: string, kept: KeptInputs): void {
    this.kept.set(campaignId, kept);
    let runs = 0;
    for (const k of this.kept.values()) runs += k.runCount;
    for (const [id, k] of this.kept) {
      if (runs <= this.maxRuns) break;
      this.kept.delete(id);
      runs -= k.runCount;
    }
  }
}

/** Runs changed since the last read beyond which the campaign is read whole: a share of its runs, and at least this many. */
const DELTA_SHARE = 0.2;
const DELTA_FLOOR = 2_000;

/** One campaign's inputs, by run. */
class KeptInputs {
  private readonly runs = new Map<string, CompletedRunFigures>();
  /** The same runs by configuration: making a changed configuration's rows again reads its runs, not the campaign's. */
  private readonly runsOf = new Map<string, Map<string, CompletedRunFigures>>();
  /** Each configuration's rows of listConfigurationEnergies (configurationEnergyRows), made again only when one of its runs changed. */
  private readonly rowsOf = new Map<string, ConfigurationEnergyRow[]>();
  /** The configurations whose rows are to be made again. */
  private readonly stale = new Set<string>();
  /** By run id in ascending order, as listCampaignRunNodes gives them (the fingerprint classes are numbered in that order). */
  private nodes = new Map<string, RunNodeRecord[]>();
  private readonly phases = new Map<string, unknown>();
  private readonly movement = new Map<string, unknown>();
  private context: CampaignFigureInputs['context'] = null;
  private seen = new Set<string>();
  private accounted = 0n;

  private constructor(private readonly configurations: readonly ConfigurationRecord[], private readonly configurationCount: number) {}

  static async readWhole(db: Database, campaignId: string, configurationCount: number): Promise<KeptInputs> {
    const [configurations, runs, nodes, context, phases, movement] = await Promise.all([
      listCampaignConfigurationRows(db, campaignId), listCompletedRunFigures(db, campaignId), listCampaignRunNodes(db, campaignId),
      findCampaignPowerContext(db, campaignId), listCampaignRunPhases(db, campaignId), listCampaignRunDataMovement(db, campaignId),
    ]);
    const kept = new KeptInputs(configurations, configurationCount);
    for (const c of configurations) kept.stale.add(c.id);
    kept.take(runs, nodes, phases, movement, context);
    return kept;
  }

  get runCount(): number {
    return this.runs.size;
  }

  /**
   * The runs to read again given the change rows now: those named by rows not seen before, or null
   * when that would not account for every change (see the glossary) or the configurations changed.
   */
  changedRuns(rows: readonly ResultsChangeRow[], configurations: number): string[] | null {
    if (configurations !== this.configurationCount) return null;
    let total = 0n;
    let named = 0n;
    const runs = new Set<string>();
    for (const r of rows) {
      total += r.changes;
      if (this.seen.has(r.id) || r.runId === null) continue;
      named += r.changes;
      runs.add(r.runId);
    }
    return this.accounted + named === total ? [...runs] : null;
  }

  /** Reads the given runs again (and the context: the cluster's name and capabilities may have changed). */
  async readRuns(db: Database, campaignId: string, runIds: readonly string[]): Promise<void> {
    if (runIds.length === 0) {
      this.context = await findCampaignPowerContext(db, campaignId);
      return;
    }
    const [runs, nodes, context, phases, movement] = await Promise.all([
      listCompletedRunFigures(db, campaignId, runIds), listCampaignRunNodes(db, campaignId, runIds), findCampaignPowerContext(db, campaignId),
      listCampaignRunPhases(db, campaignId, runIds), listCampaignRunDataMovement(db, campaignId, runIds),
    ]);
    const hadNodes = runIds.some((id) => this.nodes.has(id));
    for (const id of runIds) {
      const was = this.runs.get(id);
      if (was) {
        this.stale.add(was.configurationId);
        this.runsOf.get(was.configurationId)?.delete(id);
      }
      this.runs.delete(id);
      this.nodes.delete(id);
      this.phases.delete(id);
      this.movement.delete(id);
    }
    this.take(runs, nodes, phases, movement, context);
    if (hadNodes || nodes.size > 0) this.nodes = new Map([...this.nodes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** The change rows now all reflected. */
  saw(rows: readonly ResultsChangeRow[]): void {
    this.seen = new Set(rows.map((r) => r.id));
    this.accounted = rows.reduce((sum, r) => sum + r.changes, 0n);
  }

  /** The inputs in readCampaignFigureInputs's shape and order; rows of unchanged runs are the same objects as at the last read. */
  inputs(): CampaignFigureInputs {
    if (this.stale.size > 0) {
      for (const c of this.configurations) {
        if (!this.stale.has(c.id)) continue;
        // configurationEnergyRows for one configuration: its runs by repetition, or its one row without a run.
        this.rowsOf.set(c.id, configurationEnergyRows([c], this.runsOf.get(c.id)?.values() ?? []));
      }
      this.stale.clear();
    }
    const rows: ConfigurationEnergyRow[] = [];
    for (const c of this.configurations) for (const row of this.rowsOf.get(c.id)!) rows.push(row);
    const phaseRows: CampaignFigureInputs['phaseRows'] = [];
    const movementRows: CampaignFigureInputs['movementRows'] = [];
    if (this.phases.size + this.movement.size > 0) {
      for (const row of rows) {
        if (row.runId === null) continue;
        const phases = this.phases.get(row.runId);
        if (phases !== undefined) phaseRows.push({ runId: row.runId, key: row.key, phases });
        const movement = this.movement.get(row.runId);
        if (movement !== undefined) movementRows.push({ runId: row.runId, key: row.key, dataMovement: movement });
      }
    }
    return { rows, runNodes: this.nodes, context: this.context, phaseRows, movementRows };
  }

  private take(
    runs: readonly CompletedRunFigures[], nodes: ReadonlyMap<string, RunNodeRecord[]>, phases: readonly { runId: string; phases: unknown }[],
    movement: readonly { runId: string; dataMovement: unknown }[], context: CampaignFigureInputs['context'],
  ): void {
    for (const r of runs) {
      this.runs.set(r.runId, r);
      let of = this.runsOf.get(r.configurationId);
      if (!of) this.runsOf.set(r.configurationId, (of = new Map()));
      of.set(r.runId, r);
      this.stale.add(r.configurationId);
    }
    for (const [id, list] of nodes) this.nodes.set(id, list);
    for (const p of phases) this.phases.set(p.runId, p.phases);
    for (const m of movement) this.movement.set(m.runId, m.dataMovement);
    this.context = context;
  }
}
