import { randomInt, randomUUID } from 'node:crypto';
import { MAX_DESIGN_SEED, suiteOwner, TERMINAL_RUN_STATES, type CampaignCreator, type CampaignRunOrder, type CampaignSpec, type CampaignState, type ClusterCapabilities, type RunOrder } from '@erg/spec';
import { campaignRunOrder, settleDesign, type OrderedRun } from '@erg/sweep';
import { plainArrayLiteral, quotedArrayLiteral } from './array-literal';
import { asTransaction, poolOf, prismaOf, withTransaction, type Database, type Transaction } from './client';
import { readStoredSpec } from './stored-spec';

export interface NewCampaign {
  name: string;
  execution: 'slurm' | 'import';
  clusterId: string | null;
  /** The validated spec with defaults applied. */
  spec: CampaignSpec;
  specText: string | null;
  /** Who creates it: a user with one of their tokens (the API), or a suite; nothing else (tests). */
  creator?: { userId: string; tokenId: string; tokenName: string } | { suite: string };
  /** The project that owns the campaign (its cluster's project). */
  projectId: string;
  configurations: { key: string; parameters: Record<string, unknown> }[];
  repetitions: number;
  /** An adaptive campaign: its strategy may add runs until it stops (campaigns.strategy_open). */
  strategyOpen?: boolean;
  /**
   * Runs inside the campaign's transaction, after its rows are in: what must exist together with
   * the campaign or not at all (a suite run and its idempotency key). Throwing rolls back both.
   */
  within?: (tx: Transaction, campaignId: string) => Promise<void>;
}

export interface CreatedCampaign {
  id: string;
  createdAt: Date;
  /** The run order its runs were placed in, its seed settled (drawn here when the spec gave none). */
  design: CampaignRunOrder;
  configurations: { id: string; key: string; position: number; parameters: Record<string, unknown> }[];
  /** In position order: the design's order. */
  runs: { id: string; configurationKey: string; repetition: number; position: number }[];
}

/**
 * Rows per INSERT when a campaign is stored. Each statement's parameters — and the event loop's
 * share of making and encoding them, 10-25 ms — stay bounded whatever the campaign's size, and
 * the event loop is free while Postgres stores each chunk: a 100,000-run campaign of 50,000
 * configurations is 10 + 20 statements.
 */
export const CAMPAIGN_INSERT_CHUNK = 5_000;

/** A seed for a randomized run order that the spec left to erg: uniform over 0 … MAX_DESIGN_SEED. */
export function drawDesignSeed(): number {
  return randomInt(MAX_DESIGN_SEED + 1);
}

/**
 * Stores a campaign with every configuration and run in one transaction: either the whole sweep
 * exists (all runs `pending`) or none of it does. Rows go in with `unnest` arrays (sent as array
 * literals, array-literal.ts), one statement per CAMPAIGN_INSERT_CHUNK rows of a table, not one per
 * row: a 100,000-run campaign of 50,000 configurations costs 1 + 10 + 20 statements.
 *
 * Runs are placed in the design's order (@erg/sweep's campaignRunOrder): run `position` p is the
 * p-th run of that order, and the scheduler claims and submits by position. A randomized order
 * whose spec gave no seed gets one drawn here (`drawSeed`, crypto by default), written into the
 * stored spec (readStoredSpec returns it) and the campaign's design columns, so that every path
 * that creates a campaign — the API, a suite's trigger — stores the seed its runs were placed by.
 */
export async function createCampaign(db: Database, input: NewCampaign, drawSeed: () => number = drawDesignSeed): Promise<CreatedCampaign> {
  const id = randomUUID();
  const { repetitions } = input;
  const design = settleDesign(input.spec.design, drawSeed);
  const spec: CampaignSpec = design.seed === null ? input.spec : { ...input.spec, design: { ...input.spec.design, seed: design.seed } };
  const configurations: CreatedCampaign['configurations'] = [];
  const runs: CreatedCampaign['runs'] = [];
  const totalRuns = input.configurations.length * repetitions;
  const byToken = input.creator && 'tokenId' in input.creator ? input.creator : undefined;
  const bySuite = input.creator && 'suite' in input.creator ? input.creator : undefined;
  const createdAt = await withTransaction(db, async (client) => {
    const inserted = await client.query<{ created_at: Date }>(
      `INSERT INTO campaigns (id, name, execution, cluster_id, spec, spec_text, created_by, project_id, created_by_user_id, strategy_open, design_order, design_seed,
                              created_by_token_id, created_by_suite)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING created_at`,
      [
        id, input.name, input.execution, input.clusterId, JSON.stringify(spec), input.specText, byToken?.tokenName ?? null, input.projectId, byToken?.userId ?? null,
        input.strategyOpen ?? false, design.order, design.seed, byToken?.tokenId ?? null, bySuite?.suite ?? null,
      ],
    );
    // Rows are made a chunk at a time, between the statements, not all before the first.
    for (let from = 0; from < input.configurations.length; from += CAMPAIGN_INSERT_CHUNK) {
      const chunk = input.configurations.slice(from, from + CAMPAIGN_INSERT_CHUNK).map((c, i) => ({ id: randomUUID(), key: c.key, position: from + i, parameters: c.parameters }));
      configurations.push(...chunk);
      await client.query(
        `INSERT INTO configurations (id, campaign_id, key, position, parameters)
         SELECT u.id, $1, u.key, u.position, u.parameters
         FROM unnest($2::uuid[], $3::text[], $4::int[], $5::jsonb[]) AS u(id, key, position, parameters)`,
        [
          id, plainArrayLiteral(chunk.map((c) => c.id)), quotedArrayLiteral(chunk.map((c) => c.key)), plainArrayLiteral(chunk.map((c) => c.position)),
          quotedArrayLiteral(chunk.map((c) => JSON.stringify(c.parameters))),
        ],
      );
    }
    const order = campaignRunOrder(configurations.length, repetitions, design);
    for (let from = 0; from < totalRuns; from += CAMPAIGN_INSERT_CHUNK) {
      const chunk = Array.from({ length: Math.min(CAMPAIGN_INSERT_CHUNK, totalRuns - from) }, (_, i) => {
        const { configuration, repetition } = order.next().value as OrderedRun;
        const c = configurations[configuration]!;
        return { id: randomUUID(), configurationId: c.id, configurationKey: c.key, repetition, position: from + i };
      });
      for (const r of chunk) runs.push({ id: r.id, configurationKey: r.configurationKey, repetition: r.repetition, position: r.position });
      await client.query(
        `WITH r AS (
           INSERT INTO runs (id, campaign_id, configuration_id, repetition, position)
           SELECT u.id, $1, u.configuration_id, u.repetition, u.position
           FROM unnest($2::uuid[], $3::uuid[], $4::int[], $5::int[]) AS u(id, configuration_id, repetition, position)
           RETURNING id)
         INSERT INTO run_events (run_id, "to", detail) SELECT id, 'pending', 'created' FROM r`,
        [
          id, plainArrayLiteral(chunk.map((r) => r.id)), plainArrayLiteral(chunk.map((r) => r.configurationId)), plainArrayLiteral(chunk.map((r) => r.repetition)),
          plainArrayLiteral(chunk.map((r) => r.position)),
        ],
      );
    }
    if (input.within) await input.within(asTransaction(client), id);
    return inserted.rows[0]!.created_at;
  });
  return { id, createdAt, design, configurations, runs };
}

/** A campaign as its summary and a suite's baseline check read it: without its runs, cluster or execution. */
export interface CampaignRecord extends CampaignHead {
  /** The validated spec with defaults applied, read back through readStoredSpec (stored-spec.ts). */
  spec: CampaignSpec;
}

/** A campaign's row without its spec: what a list of campaigns shows. */
export interface CampaignHead {
  id: string;
  name: string;
  projectId: string;
  /** The text the user sent (YAML or JSON). */
  specText: string | null;
  cancelRequestedAt: Date | null;
  createdAt: Date;
  /** Who started it: the user, the token they used, the suite (@erg/spec CampaignCreator). */
  createdBy: CampaignCreator;
  /** Its strategy may still add runs (adaptive, until it stops). */
  strategyOpen: boolean;
  /** Why the strategy stopped adding runs; null while open and for the grid. */
  strategyStop: string | null;
  /**
   * The order its runs were placed in and its seed (the design columns): the truth for every
   * campaign — one created before run orders existed is configuration-major without a seed,
   * whatever its stored spec's design now defaults to.
   */
  design: CampaignRunOrder;
}

const HEAD_COLUMNS = {
  id: true, name: true, projectId: true, specText: true, cancelRequestedAt: true, createdAt: true, strategyOpen: true, strategyStop: true,
  designOrder: true, designSeed: true,
  createdBy: true, createdByTokenId: true, createdBySuite: true, createdByUser: { select: { id: true, name: true } },
} as const;

interface CreatorColumns {
  createdBy: string | null;
  createdByTokenId: string | null;
  createdBySuite: string | null;
  createdByUser: { id: string; name: string } | null;
}

/** The creator columns as who started the campaign (the token's name is the one it had then). */
function creatorOf(row: CreatorColumns): CampaignCreator {
  return {
    user: row.createdByUser,
    token: row.createdBy === null ? null : { id: row.createdByTokenId, name: row.createdBy },
    suite: row.createdBySuite,
  };
}

/**
 * Who a campaign's owner is, in one string: the user's name, or `suite:<name>` when a suite
 * started it. User names cannot contain `:`, so the two never meet. ownerSql says the same in SQL.
 */
export function campaignOwner(creator: CampaignCreator): string | null {
  return creator.suite !== null ? suiteOwner(creator.suite) : (creator.user?.name ?? null);
}

/** campaignOwner in SQL, for campaign `c` and its creating user `u` (LEFT JOIN users u ON u.id = c.created_by_user_id). */
export const ownerSql = (c: string, u: string): string => `CASE WHEN ${c}.created_by_suite IS NOT NULL THEN '${suiteOwner('')}' || ${c}.created_by_suite ELSE ${u}.name END`;
const CAMPAIGN_COLUMNS = { ...HEAD_COLUMNS, spec: true } as const;

/** A campaign row's design and creator columns as the design and the creator they say. */
function headOf<R extends { designOrder: string; designSeed: number | null } & CreatorColumns>(
  row: R,
): Omit<R, 'designOrder' | 'designSeed' | keyof CreatorColumns> & { design: CampaignRunOrder; createdBy: CampaignCreator } {
  const { designOrder, designSeed, createdBy, createdByTokenId, createdBySuite, createdByUser, ...rest } = row;
  return { ...rest, design: { order: designOrder as RunOrder, seed: designSeed }, createdBy: creatorOf({ createdBy, createdByTokenId, createdBySuite, createdByUser }) };
}

/** A campaign row as Prisma reads it, its spec typed (stored-spec.ts). */
function recordOf<R extends { id: string; spec: unknown; designOrder: string; designSeed: number | null } & CreatorColumns>(row: R) {
  const head = headOf(row);
  return { ...head, spec: readStoredSpec(row.id, row.spec) };
}

const TERMINAL = new Set<string>(TERMINAL_RUN_STATES);

/**
 * A campaign's state is derived from its runs, so it can never disagree with them — and, for an
 * adaptive campaign, from whether its strategy may still add runs: while it may, the campaign
 * runs on even when every run so far has ended (the next ones are being decided). Runs its
 * strategy withdrew (cancelled as not needed, never handed to Slurm) are no failure: a campaign
 * whose other runs all completed is completed.
 */
export function campaignState(counts: Record<string, number>, cancelRequested: boolean, strategyOpen = false, withdrawn = 0): CampaignState {
  const entries = Object.entries(counts).filter(([, n]) => n > 0);
  const open = entries.filter(([s]) => !TERMINAL.has(s));
  if (open.length > 0) {
    if (cancelRequested) return 'cancelling';
    return open.every(([s]) => s === 'pending') ? 'pending' : 'running';
  }
  if (cancelRequested) return strategyOpen ? 'cancelling' : 'cancelled';
  if (strategyOpen) return 'running';
  return entries.every(([s, n]) => s === 'completed' || (s === 'cancelled' && n === withdrawn)) ? 'completed' : 'failed';
}

/** A campaign with its state and run counts; `campaign` with its spec (getCampaignSummary) or without (a list's). */
export interface CampaignSummary<C extends CampaignHead = CampaignRecord> {
  campaign: C;
  clusterName: string | null;
  state: CampaignState;
  runCounts: Record<string, number>;
  /** Of the cancelled runs, those its strategy withdrew as not needed (runs.withdrawn_at). */
  withdrawnRuns: number;
  totalRuns: number;
}

/** A campaign's runs by state, and how many of its cancelled ones its strategy withdrew. */
export interface CampaignRunCounts {
  byState: Record<string, number>;
  withdrawn: number;
}

export async function runCountsByCampaign(db: Database, campaignIds: string[]): Promise<Map<string, CampaignRunCounts>> {
  const result = await poolOf(db).query<{ campaign_id: string; state: string; n: string; withdrawn: string }>(
    `SELECT campaign_id, state::text AS state, count(*) AS n, count(*) FILTER (WHERE withdrawn_at IS NOT NULL) AS withdrawn
       FROM runs WHERE campaign_id = ANY($1::uuid[]) GROUP BY 1, 2`,
    [campaignIds],
  );
  const map = new Map<string, CampaignRunCounts>();
  for (const row of result.rows) {
    const counts = map.get(row.campaign_id) ?? { byState: {}, withdrawn: 0 };
    counts.byState[row.state] = Number(row.n);
    counts.withdrawn += Number(row.withdrawn);
    map.set(row.campaign_id, counts);
  }
  return map;
}

const NO_RUNS: CampaignRunCounts = { byState: {}, withdrawn: 0 };

function summarize<C extends CampaignHead>(campaign: C, cluster: { name: string } | null, counts: CampaignRunCounts): CampaignSummary<C> {
  return {
    campaign,
    clusterName: cluster?.name ?? null,
    state: campaignState(counts.byState, campaign.cancelRequestedAt !== null, campaign.strategyOpen, counts.withdrawn),
    runCounts: counts.byState,
    withdrawnRuns: counts.withdrawn,
    totalRuns: Object.values(counts.byState).reduce((a, b) => a + b, 0),
  };
}

/** A campaign summary as the API's Campaign body (the same in responses and in suite webhooks). */
export function campaignSummaryView(s: CampaignSummary<CampaignHead>) {
  const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);
  return {
    id: s.campaign.id,
    name: s.campaign.name,
    cluster: s.clusterName,
    owner: campaignOwner(s.campaign.createdBy),
    createdBy: s.campaign.createdBy,
    state: s.state,
    runCounts: s.runCounts,
    totalRuns: s.totalRuns,
    createdAt: s.campaign.createdAt.toISOString(),
    cancelRequestedAt: iso(s.campaign.cancelRequestedAt),
    design: s.campaign.design,
  };
}

export async function getCampaignSummary(db: Database, id: string): Promise<CampaignSummary | null> {
  const campaign = await prismaOf(db).campaign.findUnique({ where: { id }, select: { ...CAMPAIGN_COLUMNS, cluster: { select: { name: true } } } });
  if (!campaign) return null;
  const counts = (await runCountsByCampaign(db, [id])).get(id) ?? NO_RUNS;
  const { cluster, ...row } = campaign;
  return summarize(recordOf(row), cluster, counts);
}

export interface CampaignCursor {
  createdAt: Date;
  id: string;
}

/**
 * Newest first, `limit` at a time. The cursor is the (createdAt, id) of the last item of the
 * previous page — both, so that campaigns created in the same millisecond are neither skipped nor
 * repeated. `next` is null on the last page. Without their specs: a page shows none, and parsing
 * up to 500 of them (0.05-0.5 ms each) would be spent for nothing (getCampaignSummary has it).
 */
export async function listCampaignSummaries(
  db: Database,
  opts: { limit: number; after?: CampaignCursor | undefined; projectIds?: string[] | null },
): Promise<{ items: CampaignSummary<CampaignHead>[]; next: CampaignCursor | null }> {
  const { after } = opts;
  const inProjects = opts.projectIds == null ? {} : { projectId: { in: opts.projectIds } };
  const campaigns = await prismaOf(db).campaign.findMany({
    where: { ...inProjects, ...(after ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}) },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: opts.limit + 1,
    select: { ...HEAD_COLUMNS, cluster: { select: { name: true } } },
  });
  const page = campaigns.slice(0, opts.limit);
  const counts = await runCountsByCampaign(db, page.map((c) => c.id));
  const last = page.at(-1);
  return {
    items: page.map(({ cluster, ...c }) => summarize(headOf(c), cluster, counts.get(c.id) ?? NO_RUNS)),
    next: campaigns.length > opts.limit && last ? { createdAt: last.createdAt, id: last.id } : null,
  };
}

export async function findCampaign(db: Database, id: string): Promise<CampaignRecord | null> {
  const row = await prismaOf(db).campaign.findUnique({ where: { id }, select: CAMPAIGN_COLUMNS });
  return row ? recordOf(row) : null;
}

/** The project a campaign belongs to; null when there is no such campaign. */
export async function findCampaignProject(db: Database, id: string): Promise<string | null> {
  const row = await prismaOf(db).campaign.findUnique({ where: { id }, select: { projectId: true } });
  return row?.projectId ?? null;
}

/** What a run's view needs of its cluster: the reason of a waiting run, the default partition. */
export interface CampaignCluster {
  name: string;
  /** Its project: who may read lastError's detail. */
  projectId: string;
  lastError: string | null;
  defaultPartition: string | null;
}

/** A campaign's identity and where it runs, without its spec or run counts. */
export interface CampaignRef {
  id: string;
  name: string;
  projectId: string;
  execution: 'slurm' | 'import';
  clusterId: string | null;
  cluster: CampaignCluster | null;
}

export async function findCampaignRef(db: Database, id: string): Promise<CampaignRef | null> {
  const row = await prismaOf(db).campaign.findUnique({
    where: { id },
    select: {
      id: true, name: true, projectId: true, execution: true, clusterId: true,
      cluster: { select: { name: true, projectId: true, lastError: true, defaultPartition: true } },
    },
  });
  return row ? { ...row, execution: row.execution as CampaignRef['execution'] } : null;
}

/** A campaign's spec (validated, with defaults, on the way in; read back by readStoredSpec); null when there is no such campaign. */
export async function findCampaignSpec(db: Database, id: string): Promise<CampaignSpec | null> {
  const row = await prismaOf(db).campaign.findUnique({ where: { id }, select: { spec: true } });
  return row ? readStoredSpec(id, row.spec) : null;
}

/** How many campaigns there are, in every project. */
export async function countCampaigns(db: Database): Promise<number> {
  return prismaOf(db).campaign.count();
}

/**
 * What a campaign's results say of its power state and its design: its spec, the run order its
 * runs were placed in (the design columns), and its cluster's name and capabilities.
 */
export async function findCampaignPowerContext(
  db: Database, id: string,
): Promise<{ spec: CampaignSpec; design: CampaignRunOrder; cluster: { name: string; capabilities: ClusterCapabilities | null } | null } | null> {
  const row = await prismaOf(db).campaign.findUnique({ where: { id }, select: { spec: true, designOrder: true, designSeed: true, cluster: { select: { name: true, capabilities: true } } } });
  if (!row) return null;
  return {
    spec: readStoredSpec(id, row.spec),
    design: { order: row.designOrder as RunOrder, seed: row.designSeed },
    cluster: row.cluster ? { name: row.cluster.name, capabilities: (row.cluster.capabilities ?? null) as ClusterCapabilities | null } : null,
  };
}

/** One of a campaign's configurations, with how many of its runs completed. */
export interface ConfigurationEntry {
  key: string;
  parameters: Record<string, unknown>;
  completedRuns: number;
}

/**
 * A page of a campaign's configurations in their listed order (position), with how many there are
 * in all: every one, or only those with (`measured: true`) or without (`false`) a completed run —
 * a search campaign's candidates not measured yet, which its results count but do not list.
 */
export async function listCampaignConfigurations(
  db: Database, campaignId: string, opts: { measured?: boolean | undefined; limit: number; offset: number },
): Promise<{ items: ConfigurationEntry[]; total: number }> {
  const filter = opts.measured === undefined ? '' : opts.measured ? 'WHERE n.completed > 0' : 'WHERE n.completed = 0';
  const { rows } = await poolOf(db).query<{ key: string; parameters: Record<string, unknown>; completed: number; total: number }>(
    `WITH n AS (
       SELECT c.key, c.parameters, c.position,
              (SELECT count(*)::int FROM runs r WHERE r.configuration_id = c.id AND r.state = 'completed') AS completed
       FROM configurations c WHERE c.campaign_id = $1
     )
     SELECT key, parameters, completed, count(*) OVER ()::int AS total FROM n ${filter}
     ORDER BY position LIMIT $2 OFFSET $3`,
    [campaignId, opts.limit, opts.offset],
  );
  // A page past the end has no row to carry the total: count it alone.
  if (rows.length === 0 && opts.offset > 0) {
    const all = await poolOf(db).query<{ total: number }>(
      `SELECT count(*)::int AS total FROM configurations c WHERE c.campaign_id = $1
         ${opts.measured === undefined ? '' : `AND ${opts.measured ? '' : 'NOT '}EXISTS (SELECT 1 FROM runs r WHERE r.configuration_id = c.id AND r.state = 'completed')`}`,
      [campaignId],
    );
    return { items: [], total: all.rows[0]!.total };
  }
  return { items: rows.map((r) => ({ key: r.key, parameters: r.parameters, completedRuns: r.completed })), total: rows[0]?.total ?? 0 };
}
